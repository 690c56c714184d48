import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { startReceiver, type Received } from '../../../test/helpers/receiver.js';

/**
 * A local stand-in for the HighLevel API 2.0 endpoints the sink calls, imported by tests only. It follows the
 * OpenAPI document (https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json) and the search guide it
 * links to: `Authorization: Bearer` and `Version: 2021-07-28` checked, bodies checked against UpsertContactDto,
 * UpdateContactDto, TagsDTO, NotesDTO and the search body (a property a DTO does not have is refused as HighLevel's
 * validation does, 422 `property X should not exist`), replies in the documented shapes, errors in the documented
 * bodies (`{ statusCode, message, error }`), and the five `X-RateLimit-*` headers on every reply. Contacts and notes
 * live in memory. It can be told to answer 429s, to revoke the token, to drop a scope, or to lose a reply after doing
 * the work.
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

export interface FakeRequest {
  method: string;
  path: string;
  headers: Received['headers'];
  body: unknown;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface FakeGoHighLevel {
  url: string;
  token: string;
  locationId: string;
  contacts: FakeContact[];
  notes: FakeNote[];
  requests: FakeRequest[];
  /** A contact as someone typed it into HighLevel, `dateUpdated` included when a test needs an order. */
  addContact(fields: Partial<FakeContact>): FakeContact;
  notesOf(contactId: string): FakeNote[];
  /** The next `count` requests get a 429 with no burst request remaining and `intervalMs` as the window. */
  rateLimitNext(count: number, intervalMs?: number): void;
  /** The next `count` requests get `status` with a documented error body. */
  failNext(count: number, status: number): void;
  /** The token stops working, as one revoked or expired: 401 from then on. */
  revoke(): void;
  /** The token loses a scope (`contacts.write`): requests needing it get 401 "not authorized for this scope". */
  dropScope(scope: string): void;
  /** The next request matching does its work, then the connection is destroyed before any answer. */
  loseReply(method: string, path: RegExp): void;
  close(): Promise<void>;
}

/** UpsertContactDto's properties; UpdateContactDto has the same but `locationId`, `gender` and `companyName`. */
const UPSERT_FIELDS = new Set([
  'firstName', 'lastName', 'name', 'email', 'locationId', 'gender', 'phone', 'address1', 'city', 'state', 'postalCode', 'website', 'timezone', 'dnd',
  'dndSettings', 'inboundDndSettings', 'tags', 'customFields', 'source', 'country', 'companyName', 'assignedTo',
]);
const UPDATE_FIELDS = new Set([...UPSERT_FIELDS].filter((f) => !['locationId', 'gender', 'companyName'].includes(f)));
const TEXT_FIELDS = new Set(['firstName', 'lastName', 'name', 'email', 'locationId', 'gender', 'phone', 'address1', 'city', 'state', 'postalCode', 'website', 'timezone', 'source', 'country', 'companyName', 'assignedTo']);
/** The search guide's filter fields this fake reads; the guide documents more, which it refuses as unknown. */
const SEARCH_FIELDS = new Set(['id', 'email', 'phone', 'firstNameLowerCase', 'lastNameLowerCase', 'tags', 'dateUpdated', 'dateAdded']);
const SORT_FIELDS = new Set(['firstNameLowerCase', 'lastNameLowerCase', 'businessName', 'dateAdded', 'dateUpdated', 'email', 'dnd', 'source']);

type Body = Record<string, unknown>;

class Refusal extends Error {
  readonly status: number;
  readonly body: Body;

  constructor(status: number, body: Body) {
    super(String(body.message));
    this.status = status;
    this.body = body;
  }
}

const unprocessable = (messages: string[]) => new Refusal(422, { statusCode: 422, message: messages, error: 'Unprocessable Entity' });
const badRequest = (message: string) => new Refusal(400, { statusCode: 400, message });

export async function startFakeGoHighLevel({ token = 'pit-0f3c9a71-5b2e-4d8e-9c1a-7e6f5d4c3b2a', locationId = 've9EPM428h8vShlRW1KT', allowDuplicates = false } = {}): Promise<FakeGoHighLevel> {
  const contacts: FakeContact[] = [];
  const notes: FakeNote[] = [];
  const requests: FakeRequest[] = [];
  const scopes = new Set(['contacts.readonly', 'contacts.write']);
  let revoked = false;
  let limited: { count: number; intervalMs: number } = { count: 0, intervalMs: 10_000 };
  let failing: { count: number; status: number } = { count: 0, status: 500 };
  let losing: { method: string; path: RegExp } | undefined;
  let served = 0;

  const id = () => randomBytes(15).toString('base64').replace(/[^A-Za-z0-9]/g, '').padEnd(20, 'x').slice(0, 20);
  const now = () => new Date().toISOString();

  const contactById = (contactId: string) => {
    const contact = contacts.find((c) => c.id === contactId && c.locationId === locationId);
    if (!contact) throw badRequest('Contact not found');
    return contact;
  };

  /** The DTO checks HighLevel's validation makes: known properties only, strings where strings go. */
  const checkContact = (body: unknown, allowed: ReadonlySet<string>): Body => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('Bad Request');
    const messages: string[] = [];
    for (const [field, value] of Object.entries(body)) {
      if (!allowed.has(field)) messages.push(`property ${field} should not exist`);
      else if (TEXT_FIELDS.has(field) && value !== null && typeof value !== 'string') messages.push(`${field} must be a string`);
      else if (field === 'tags' && !(Array.isArray(value) && value.every((t) => typeof t === 'string'))) messages.push('each value in tags must be a string');
      else if (field === 'customFields' && !(Array.isArray(value) && value.every(isCustomField))) messages.push('customFields must be a list of { id or key, field_value }');
    }
    if (messages.length > 0) throw unprocessable(messages);
    return body as Body;
  };

  /** Writes the given fields only; custom fields merge by key or id, as HighLevel keeps the ones not given. */
  const write = (contact: FakeContact, fields: Body) => {
    for (const [field, value] of Object.entries(fields)) {
      if (field === 'customFields') {
        for (const given of value as { id?: string; key?: string; field_value: unknown }[]) {
          const same = contact.customFields.find((c) => (given.id !== undefined && c.id === given.id) || (given.key !== undefined && c.key === given.key));
          if (same) same.value = given.field_value;
          else contact.customFields.push({ ...(given.id !== undefined && { id: given.id }), ...(given.key !== undefined && { key: given.key }), value: given.field_value });
        }
      } else if (field !== 'locationId') {
        contact[field] = value;
      }
    }
    contact.dateUpdated = now();
  };

  const create = (fields: Partial<FakeContact>): FakeContact => {
    const at = now();
    const contact: FakeContact = { id: id(), locationId, tags: [], customFields: [], dateAdded: at, dateUpdated: at };
    Object.assign(contact, fields);
    contacts.push(contact);
    return contact;
  };

  /** The location's "Allow Duplicate Contact" setting: off, it matches email first, then phone (its default order). */
  const duplicateOf = (fields: Body) => {
    if (allowDuplicates) return undefined;
    const email = typeof fields.email === 'string' ? fields.email.toLowerCase() : undefined;
    const phone = typeof fields.phone === 'string' ? fields.phone : undefined;
    const mine = contacts.filter((c) => c.locationId === locationId);
    return (email && mine.find((c) => c.email?.toLowerCase() === email)) || (phone && mine.find((c) => c.phone === phone)) || undefined;
  };

  const matches = (contact: FakeContact, filter: unknown): boolean => {
    if (typeof filter !== 'object' || filter === null) throw badRequest('filters must be a list of filters or groups');
    const f = filter as { group?: unknown; filters?: unknown; field?: unknown; operator?: unknown; value?: unknown };
    if (f.group !== undefined) {
      if ((f.group !== 'AND' && f.group !== 'OR') || !Array.isArray(f.filters)) throw badRequest('group must be AND or OR, with its filters');
      return f.group === 'AND' ? f.filters.every((g) => matches(contact, g)) : f.filters.some((g) => matches(contact, g));
    }
    if (typeof f.field !== 'string' || !SEARCH_FIELDS.has(f.field)) throw badRequest(`Invalid filter field: ${String(f.field)}`);
    const have = contact[f.field];
    const same = (value: unknown) => (f.field === 'email' && typeof have === 'string' && typeof value === 'string' ? have.toLowerCase() === value.toLowerCase() : have === value);
    switch (f.operator) {
      case 'eq': return Array.isArray(have) ? have.includes(f.value) : same(f.value);
      case 'not_eq': return !same(f.value);
      case 'exists': return have !== undefined && have !== null && have !== '';
      case 'not_exists': return have === undefined || have === null || have === '';
      default: throw badRequest(`Invalid operator: ${String(f.operator)}`);
    }
  };

  const search = (body: unknown) => {
    if (typeof body !== 'object' || body === null) throw badRequest('Bad Request');
    const b = body as { locationId?: unknown; page?: unknown; pageLimit?: unknown; filters?: unknown; sort?: unknown };
    const known = ['locationId', 'page', 'pageLimit', 'searchAfter', 'filters', 'sort', 'query'];
    const unknown = Object.keys(b).find((k) => !known.includes(k));
    if (unknown) throw badRequest(`property ${unknown} should not exist`);
    if (typeof b.locationId !== 'string' || b.locationId === '') throw badRequest('locationId is required');
    if (b.locationId !== locationId) throw new Refusal(403, { statusCode: 403, message: 'The token does not have access to this location.' });
    if (typeof b.pageLimit !== 'number' || b.pageLimit < 1 || b.pageLimit > 500) throw badRequest('pageLimit must be a number from 1 to 500');
    const filters = b.filters ?? [];
    if (!Array.isArray(filters)) throw badRequest('filters must be a list');
    const sort = b.sort ?? [];
    if (!Array.isArray(sort) || sort.length > 2) throw badRequest('sort must be a list of at most two');
    const found = contacts.filter((c) => c.locationId === locationId && filters.every((f) => matches(c, f)));
    for (const order of [...sort].reverse()) {
      const { field, direction } = order as { field?: unknown; direction?: unknown };
      if (typeof field !== 'string' || !SORT_FIELDS.has(field) || (direction !== 'asc' && direction !== 'desc')) throw badRequest('Invalid sort');
      found.sort((x, y) => String(x[field] ?? '').localeCompare(String(y[field] ?? '')) * (direction === 'asc' ? 1 : -1));
    }
    const page = typeof b.page === 'number' ? b.page : 1;
    return { contacts: found.slice((page - 1) * b.pageLimit, page * b.pageLimit).map(searched), total: found.length };
  };

  const note = (body: unknown): { body: string; userId?: string } => {
    if (typeof body !== 'object' || body === null) throw badRequest('Bad Request');
    const messages = Object.keys(body).filter((k) => k !== 'body' && k !== 'userId').map((k) => `property ${k} should not exist`);
    const b = body as { body?: unknown; userId?: unknown };
    if (typeof b.body !== 'string') messages.push('body must be a string');
    if (b.userId !== undefined && typeof b.userId !== 'string') messages.push('userId must be a string');
    if (messages.length > 0) throw unprocessable(messages);
    return b as { body: string; userId?: string };
  };

  /** `METHOD path` → the scope it needs (the OpenAPI document's `security`) and what it answers. */
  const routes: { method: string; path: RegExp; scope: string; answer: (body: unknown, params: string[]) => [number, unknown] }[] = [
    { method: 'POST', path: /^\/contacts\/search$/, scope: 'contacts.readonly', answer: (body) => [200, search(body)] },
    {
      method: 'POST', path: /^\/contacts\/upsert$/, scope: 'contacts.write', answer: (body) => {
        const fields = checkContact(body, UPSERT_FIELDS);
        if (typeof fields.locationId !== 'string') throw unprocessable(['locationId must be a string']);
        if (fields.locationId !== locationId) throw new Refusal(403, { statusCode: 403, message: 'The token does not have access to this location.' });
        const existing = duplicateOf(fields);
        const contact = existing ?? create({});
        write(contact, fields);
        return [200, { new: existing === undefined, contact: { ...contact }, traceId: id() }];
      },
    },
    {
      method: 'PUT', path: /^\/contacts\/([^/]+)$/, scope: 'contacts.write', answer: (body, [contactId]) => {
        const fields = checkContact(body, UPDATE_FIELDS);
        const contact = contactById(contactId!);
        write(contact, fields);
        return [200, { succeded: true, contact: { ...contact } }];
      },
    },
    {
      method: 'POST', path: /^\/contacts\/([^/]+)\/tags$/, scope: 'contacts.write', answer: (body, [contactId]) => {
        const tags = (body as { tags?: unknown } | null)?.tags;
        if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) throw unprocessable(['each value in tags must be a string', 'tags must be an array']);
        const extra = Object.keys(body as Body).filter((k) => k !== 'tags');
        if (extra.length > 0) throw unprocessable(extra.map((k) => `property ${k} should not exist`));
        const contact = contactById(contactId!);
        contact.tags = [...new Set([...contact.tags, ...tags])];
        contact.dateUpdated = now();
        return [201, { tags: contact.tags }];
      },
    },
    { method: 'GET', path: /^\/contacts\/([^/]+)\/notes$/, scope: 'contacts.readonly', answer: (_body, [contactId]) => [200, { notes: notesOf(contactById(contactId!).id) }] },
    {
      method: 'POST', path: /^\/contacts\/([^/]+)\/notes$/, scope: 'contacts.write', answer: (body, [contactId]) => {
        const given = note(body);
        const contact = contactById(contactId!);
        const created: FakeNote = { id: id(), contactId: contact.id, body: given.body, ...(given.userId && { userId: given.userId }), dateAdded: now() };
        notes.push(created);
        return [201, { note: created }];
      },
    },
    {
      method: 'PUT', path: /^\/contacts\/([^/]+)\/notes\/([^/]+)$/, scope: 'contacts.write', answer: (body, [contactId, noteId]) => {
        const given = note(body);
        const found = notes.find((n) => n.id === noteId && n.contactId === contactById(contactId!).id);
        if (!found) throw badRequest('Note not found');
        found.body = given.body;
        if (given.userId) found.userId = given.userId;
        return [200, { note: found }];
      },
    },
  ];

  const notesOf = (contactId: string) => notes.filter((n) => n.contactId === contactId);

  const rateHeaders = (remaining: number, intervalMs: number) => ({
    'x-ratelimit-limit-daily': '200000',
    'x-ratelimit-daily-remaining': String(Math.max(0, 200_000 - served)),
    'x-ratelimit-interval-milliseconds': String(intervalMs),
    'x-ratelimit-max': '100',
    'x-ratelimit-remaining': String(remaining),
  });

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...rateHeaders(99, 10_000), ...headers }).end(JSON.stringify(body));
  };

  const receiver = await startReceiver((req, res) => {
    served++;
    const url = new URL(req.url, 'http://fake');
    let body: unknown;
    try {
      body = req.body === '' ? undefined : JSON.parse(req.body);
    } catch {
      return reply(res, 400, { statusCode: 400, message: 'Unexpected token in JSON body' });
    }
    requests.push({ method: req.method, path: url.pathname, headers: req.headers, body, at: Date.now() });

    if (limited.count > 0) {
      limited.count--;
      return reply(res, 429, { statusCode: 429, message: 'Too Many Requests' }, rateHeaders(0, limited.intervalMs));
    }
    if (failing.count > 0) {
      failing.count--;
      return reply(res, failing.status, { statusCode: failing.status, message: failing.status >= 500 ? 'Internal Server Error' : 'Refused' });
    }
    if (req.headers.authorization !== `Bearer ${token}` || revoked) {
      return reply(res, 401, { statusCode: 401, message: 'Invalid JWT', error: 'Unauthorized' });
    }
    if (req.headers.version !== '2021-07-28') return reply(res, 400, { statusCode: 400, message: 'Version header is missing or not 2021-07-28' });

    const route = routes.find((r) => r.method === req.method && r.path.test(url.pathname));
    if (!route) return reply(res, 404, { statusCode: 404, message: `Cannot ${req.method} ${url.pathname}`, error: 'Not Found' });
    if (!scopes.has(route.scope)) return reply(res, 401, { statusCode: 401, message: 'The token is not authorized for this scope.', error: 'Unauthorized' });
    if (body !== undefined && req.headers['content-type']?.split(';')[0] !== 'application/json') return reply(res, 400, { statusCode: 400, message: 'Content-Type must be application/json' });
    try {
      const params = route.path.exec(url.pathname)!.slice(1).map(decodeURIComponent);
      const [status, answer] = route.answer(body, params);
      if (losing && losing.method === req.method && losing.path.test(url.pathname)) {
        losing = undefined;
        res.socket?.destroy();
        return;
      }
      reply(res, status, answer);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      reply(res, err.status, err.body);
    }
  });

  return {
    url: receiver.url,
    token,
    locationId,
    contacts,
    notes,
    requests,
    addContact: (fields) => {
      const contact = create({});
      Object.assign(contact, fields);
      return contact;
    },
    notesOf,
    rateLimitNext: (count, intervalMs = 10_000) => {
      limited = { count, intervalMs };
    },
    failNext: (count, status) => {
      failing = { count, status };
    },
    revoke: () => {
      revoked = true;
    },
    dropScope: (scope) => {
      scopes.delete(scope);
    },
    loseReply: (method, path) => {
      losing = { method, path };
    },
    close: () => receiver.close(),
  };
}

function isCustomField(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { id, key } = value as { id?: unknown; key?: unknown };
  return (typeof id === 'string' && id !== '') || (typeof key === 'string' && key !== '');
}

/** A contact as the search answers it (SearchContactSuccessResponseDto's Contact). */
function searched(contact: FakeContact) {
  const { customFields, ...rest } = contact;
  return { ...rest, firstNameLowerCase: contact.firstName?.toLowerCase(), lastNameLowerCase: contact.lastName?.toLowerCase(), customFields: customFields.map((c) => ({ id: c.id ?? c.key, value: c.value })) };
}
