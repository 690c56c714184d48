/**
 * What the fake HighLevel (gohighlevel.ts) checks and answers, from the OpenAPI document
 * (https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json) and the search guide it links to
 * (https://doc.clickup.com/8631005/d/h/87cpx-158396/6e629989abe7fad): the DTOs' properties, the error bodies
 * (BadRequestDTO `{ statusCode, message }`, UnprocessableDTO `{ statusCode, message: [..], error }`), and the search.
 * Imported by tests only.
 */

export interface FakeContact {
  id: string;
  locationId: string;
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  tags: string[];
  customFields: { id?: string; key?: string; value: unknown }[];
  dateAdded: string;
  dateUpdated: string;
  [field: string]: unknown;
}

export interface FakeNote {
  id: string;
  contactId: string;
  body: string;
  userId?: string;
  dateAdded: string;
}

/**
 * UpsertContactDto's properties (apps/contacts.json as of May 2026). UpdateContactDto has the same but `locationId`,
 * `gender`, `companyName` and `createNewIfDuplicateAllowed`: the update refuses those with a 422.
 */
export const UPSERT_FIELDS = new Set([
  'firstName',
  'lastName',
  'name',
  'email',
  'locationId',
  'gender',
  'phone',
  'address1',
  'city',
  'state',
  'postalCode',
  'website',
  'timezone',
  'dnd',
  'dndSettings',
  'inboundDndSettings',
  'tags',
  'customFields',
  'source',
  'dateOfBirth',
  'country',
  'companyName',
  'assignedTo',
  'createNewIfDuplicateAllowed',
]);
export const UPDATE_FIELDS = new Set(
  [...UPSERT_FIELDS].filter((f) => !['locationId', 'gender', 'companyName', 'createNewIfDuplicateAllowed'].includes(f)),
);
const TEXT_FIELDS = new Set([
  'firstName',
  'lastName',
  'name',
  'email',
  'locationId',
  'gender',
  'phone',
  'address1',
  'city',
  'state',
  'postalCode',
  'website',
  'timezone',
  'source',
  'country',
  'companyName',
  'assignedTo',
]);
const BOOLEAN_FIELDS = new Set(['dnd', 'createNewIfDuplicateAllowed']);
/** The search guide's filter fields this fake reads; the guide documents more, which it refuses as unknown. */
const SEARCH_FIELDS = new Set([
  'id',
  'email',
  'phone',
  'firstNameLowerCase',
  'lastNameLowerCase',
  'tags',
  'dateUpdated',
  'dateAdded',
]);
const SORT_FIELDS = new Set([
  'firstNameLowerCase',
  'lastNameLowerCase',
  'businessName',
  'dateAdded',
  'dateUpdated',
  'email',
  'dnd',
  'source',
]);

export type Body = Record<string, unknown>;

export class Refusal extends Error {
  readonly status: number;
  readonly body: Body;

  constructor(status: number, body: Body) {
    super(String(body.message));
    this.status = status;
    this.body = body;
  }
}

export const unprocessable = (messages: string[]) =>
  new Refusal(422, { statusCode: 422, message: messages, error: 'Unprocessable Entity' });
export const badRequest = (message: string) => new Refusal(400, { statusCode: 400, message });

/** The DTO checks HighLevel's validation makes: known properties only, strings where strings go. */
export function checkContact(body: unknown, allowed: ReadonlySet<string>): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Bad Request');
  const messages: string[] = [];
  for (const [field, value] of Object.entries(body)) {
    if (!allowed.has(field)) messages.push(`property ${field} should not exist`);
    else if (TEXT_FIELDS.has(field) && value !== null && typeof value !== 'string')
      messages.push(`${field} must be a string`);
    else if (BOOLEAN_FIELDS.has(field) && typeof value !== 'boolean') messages.push(`${field} must be a boolean value`);
    else if (field === 'tags' && !(Array.isArray(value) && value.every((t) => typeof t === 'string')))
      messages.push('each value in tags must be a string');
    else if (field === 'customFields' && !(Array.isArray(value) && value.every(isCustomField)))
      messages.push('customFields must be a list of { id or key, field_value }');
  }
  if (messages.length > 0) throw unprocessable(messages);
  return body as Body;
}

/** NotesDTO: `body` required, `userId` optional. */
export function checkNote(body: unknown): { body: string; userId?: string } {
  if (typeof body !== 'object' || body === null) throw badRequest('Bad Request');
  const messages = Object.keys(body)
    .filter((k) => k !== 'body' && k !== 'userId')
    .map((k) => `property ${k} should not exist`);
  const b = body as { body?: unknown; userId?: unknown };
  if (typeof b.body !== 'string') messages.push('body must be a string');
  if (b.userId !== undefined && typeof b.userId !== 'string') messages.push('userId must be a string');
  if (messages.length > 0) throw unprocessable(messages);
  return b as { body: string; userId?: string };
}

/** The search body of the guide: `locationId` and `pageLimit` required, `filters` and at most two `sort`s. */
export function checkSearch(body: unknown): SearchBody {
  if (typeof body !== 'object' || body === null) throw badRequest('Bad Request');
  const b = body as { locationId?: unknown; page?: unknown; pageLimit?: unknown; filters?: unknown; sort?: unknown };
  const known = ['locationId', 'page', 'pageLimit', 'searchAfter', 'filters', 'sort', 'query'];
  const unknown = Object.keys(b).find((k) => !known.includes(k));
  if (unknown) throw badRequest(`property ${unknown} should not exist`);
  if (typeof b.locationId !== 'string' || b.locationId === '') throw badRequest('locationId is required');
  if (typeof b.pageLimit !== 'number' || b.pageLimit < 1 || b.pageLimit > 500)
    throw badRequest('pageLimit must be a number from 1 to 500');
  const filters = b.filters ?? [];
  if (!Array.isArray(filters)) throw badRequest('filters must be a list');
  const sort = b.sort ?? [];
  if (!Array.isArray(sort) || sort.length > 2) throw badRequest('sort must be a list of at most two');
  for (const order of sort) {
    const { field, direction } = (order ?? {}) as { field?: unknown; direction?: unknown };
    if (typeof field !== 'string' || !SORT_FIELDS.has(field) || (direction !== 'asc' && direction !== 'desc'))
      throw badRequest('Invalid sort');
  }
  return {
    locationId: b.locationId,
    page: typeof b.page === 'number' ? b.page : 1,
    pageLimit: b.pageLimit,
    filters,
    sort: sort as SearchBody['sort'],
  };
}

/** The contacts a checked search finds, sorted as asked, one page of them, as the search answers them. */
export function searchContacts(contacts: readonly FakeContact[], { page, pageLimit, filters, sort }: SearchBody) {
  const found = contacts.filter((c) => filters.every((f) => matches(c, f)));
  for (const { field, direction } of [...sort].reverse()) {
    found.sort((x, y) => String(x[field] ?? '').localeCompare(String(y[field] ?? '')) * (direction === 'asc' ? 1 : -1));
  }
  return { contacts: found.slice((page - 1) * pageLimit, page * pageLimit).map(searched), total: found.length };
}

export interface SearchBody {
  locationId: string;
  page: number;
  pageLimit: number;
  filters: unknown[];
  sort: { field: string; direction: 'asc' | 'desc' }[];
}

/** One filter or group of filters of the search guide (`eq`, `not_eq`, `exists`, `not_exists`); email ignores case. */
export function matches(contact: FakeContact, filter: unknown): boolean {
  if (typeof filter !== 'object' || filter === null) throw badRequest('filters must be a list of filters or groups');
  const f = filter as { group?: unknown; filters?: unknown; field?: unknown; operator?: unknown; value?: unknown };
  if (f.group !== undefined) {
    if ((f.group !== 'AND' && f.group !== 'OR') || !Array.isArray(f.filters))
      throw badRequest('group must be AND or OR, with its filters');
    return f.group === 'AND' ? f.filters.every((g) => matches(contact, g)) : f.filters.some((g) => matches(contact, g));
  }
  if (typeof f.field !== 'string' || !SEARCH_FIELDS.has(f.field))
    throw badRequest(`Invalid filter field: ${String(f.field)}`);
  const have = (searched(contact) as Record<string, unknown>)[f.field];
  const same = (value: unknown) =>
    f.field === 'email' && typeof have === 'string' && typeof value === 'string'
      ? have.toLowerCase() === value.toLowerCase()
      : have === value;
  switch (f.operator) {
    case 'eq':
      return Array.isArray(have) ? have.includes(f.value) : same(f.value);
    case 'not_eq':
      return !same(f.value);
    case 'exists':
      return have !== undefined && have !== null && have !== '';
    case 'not_exists':
      return have === undefined || have === null || have === '';
    default:
      throw badRequest(`Invalid operator: ${String(f.operator)}`);
  }
}

function isCustomField(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { id, key } = value as { id?: unknown; key?: unknown };
  return (typeof id === 'string' && id !== '') || (typeof key === 'string' && key !== '');
}

/** A contact as the search answers it (SearchContactSuccessResponseDto's Contact). */
function searched(contact: FakeContact) {
  const { customFields, ...rest } = contact;
  return {
    ...rest,
    firstNameLowerCase: contact.firstName?.toLowerCase(),
    lastNameLowerCase: contact.lastName?.toLowerCase(),
    customFields: customFields.map((c) => ({ id: c.id ?? c.key, value: c.value })),
  };
}
