import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';

/**
 * The CRM behind the fake HubSpot (hubspot.ts), for tests only: contacts and calls in memory, with the search, batch
 * upsert, create, update and default association of HubSpot's documentation, each request's body checked against the
 * documented shape and each property name against the account's properties. An object becomes searchable `indexLagMs`
 * after it is made, as HubSpot's search index lags (https://developers.hubspot.com/docs/api/crm/search).
 */

export interface HubSpotObject {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  /** Associations made with this object: to whom, by which type. */
  associations: { to: string; typeId: number; category: string }[];
}

export type ObjectType = 'contacts' | 'calls';

/** The default properties the sink may write, and the read-only ones HubSpot calculates (writing one is refused). */
const WRITABLE = {
  contacts: new Set([
    'email',
    'firstname',
    'lastname',
    'phone',
    'mobilephone',
    'company',
    'jobtitle',
    'lifecyclestage',
    'hs_lead_status',
    'city',
    'country',
  ]),
  calls: new Set([
    'hs_timestamp',
    'hs_call_title',
    'hs_call_body',
    'hs_call_duration',
    'hs_call_status',
    'hs_call_recording_url',
    'hs_call_direction',
    'hs_call_from_number',
    'hs_call_to_number',
    'hubspot_owner_id',
  ]),
};
const CALCULATED = {
  contacts: new Set([
    'hs_object_id',
    'createdate',
    'lastmodifieddate',
    'hs_searchable_calculated_phone_number',
    'hs_searchable_calculated_mobile_number',
  ]),
  calls: new Set(['hs_object_id', 'hs_createdate', 'hs_lastmodifieddate']),
};

const value = z.union([z.string(), z.number(), z.boolean()]);
const properties = z.record(z.string(), value.nullable());
const searchBody = z.strictObject({
  filterGroups: z
    .array(
      z.strictObject({
        filters: z
          .array(
            z.strictObject({
              propertyName: z.string(),
              operator: z.enum([
                'EQ',
                'NEQ',
                'IN',
                'NOT_IN',
                'HAS_PROPERTY',
                'NOT_HAS_PROPERTY',
                'LT',
                'LTE',
                'GT',
                'GTE',
                'CONTAINS_TOKEN',
              ]),
              value: value.optional(),
              values: z.array(value).max(100).optional(),
            }),
          )
          .min(1)
          .max(10),
      }),
    )
    .max(5)
    .refine((groups) => groups.reduce((n, g) => n + g.filters.length, 0) <= 25, 'at most 25 filters in all'),
  properties: z.array(z.string()).optional(),
  sorts: z
    .array(z.strictObject({ propertyName: z.string(), direction: z.enum(['ASCENDING', 'DESCENDING']) }))
    .max(1)
    .optional(),
  limit: z.number().int().min(1).max(200).optional(),
  after: z.union([z.string(), z.number()]).optional(),
});
const upsertBody = z.strictObject({
  inputs: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        idProperty: z.literal('email'),
        properties,
        objectWriteTraceId: z.string().optional(),
      }),
    )
    .min(1)
    .max(100),
});
const association = z.strictObject({
  to: z.strictObject({ id: z.union([z.string(), z.number()]) }),
  types: z
    .array(
      z.strictObject({
        associationCategory: z.enum(['HUBSPOT_DEFINED', 'USER_DEFINED', 'INTEGRATOR_DEFINED']),
        associationTypeId: z.number().int(),
      }),
    )
    .min(1),
});
const createBody = z.strictObject({ properties, associations: z.array(association).optional() });
const updateBody = z.strictObject({ properties });

/** A refusal in HubSpot's shape: status, message, category, and what else the body carries. */
export class HubSpotError extends Error {
  readonly status: number;
  readonly category: string;
  readonly extra: Record<string, unknown>;

  constructor(status: number, message: string, category: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.status = status;
    this.category = category;
    this.extra = extra;
  }
}

export type FakeCrm = ReturnType<typeof fakeCrm>;

export function fakeCrm({ indexLagMs = 0 }: { indexLagMs?: number } = {}) {
  const store = { contacts: new Map<string, HubSpotObject>(), calls: new Map<string, HubSpotObject>() };
  /** When each object became searchable (its creation plus the index's lag). */
  const searchableAt = new Map<HubSpotObject, number>();
  let nextId = 1001;

  const make = (
    type: ObjectType,
    props: Record<string, string>,
    at = new Date().toISOString(),
    lag = indexLagMs,
  ): HubSpotObject => {
    const object: HubSpotObject = {
      id: String(nextId++),
      properties: {},
      createdAt: at,
      updatedAt: at,
      associations: [],
    };
    write(type, object, props, at);
    store[type].set(object.id, object);
    searchableAt.set(object, Date.parse(at) + lag);
    return object;
  };

  function searchObjects(type: ObjectType, request: z.output<typeof searchBody>) {
    for (const filter of request.filterGroups.flatMap((g) => g.filters)) known(type, filter.propertyName, false);
    const now = Date.now();
    const same = (a: unknown, b: unknown) => String(a).toLowerCase() === String(b).toLowerCase();
    const matches = (object: HubSpotObject) =>
      request.filterGroups.length === 0 ||
      request.filterGroups.some((group) =>
        group.filters.every((f) => {
          const have = object.properties[f.propertyName];
          if (f.operator === 'EQ') return have !== undefined && same(have, f.value);
          if (f.operator === 'IN') return have !== undefined && (f.values ?? []).some((v) => same(have, v));
          if (f.operator === 'HAS_PROPERTY') return have !== undefined && have !== '';
          throw new HubSpotError(400, `the fake does not implement ${f.operator}`, 'VALIDATION_ERROR');
        }),
      );
    const found = [...store[type].values()].filter((o) => (searchableAt.get(o) ?? 0) <= now && matches(o));
    const [sort] = request.sorts ?? [];
    if (sort) {
      const key = (o: HubSpotObject) => o.properties[sort.propertyName] ?? '';
      found.sort((a, b) => (sort.direction === 'ASCENDING' ? 1 : -1) * key(a).localeCompare(key(b)));
    }
    const limit = request.limit ?? 10;
    const shown = new Set([
      ...(request.properties ?? []),
      ...(type === 'contacts'
        ? ['createdate', 'lastmodifieddate', 'hs_object_id']
        : ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id']),
    ]);
    return {
      total: found.length,
      results: found.slice(0, limit).map((o) => ({
        ...view(o),
        properties: Object.fromEntries(Object.entries(o.properties).filter(([k]) => shown.has(k))),
      })),
      ...(found.length > limit && { paging: { next: { after: String(limit) } } }),
    };
  }

  function upsert(request: z.output<typeof upsertBody>) {
    const startedAt = new Date().toISOString();
    const results = request.inputs.map((input) => {
      for (const name of Object.keys(input.properties)) known('contacts', name, true);
      const existing = [...store.contacts.values()].find(
        (c) => c.properties.email?.toLowerCase() === input.id.toLowerCase(),
      );
      if (existing) {
        write('contacts', existing, { ...strings(input.properties), email: existing.properties.email! });
        return { ...view(existing), new: false };
      }
      // An upsert's contact is written at once and is at once what later upserts by the same email find.
      return { ...view(make('contacts', { ...strings(input.properties), email: input.id })), new: true };
    });
    return { status: 'COMPLETE', results, startedAt, completedAt: new Date().toISOString() };
  }

  function createObject(type: ObjectType, request: z.output<typeof createBody>) {
    for (const name of Object.keys(request.properties)) known(type, name, true);
    if (type === 'calls' && request.properties.hs_timestamp === undefined)
      throw new HubSpotError(400, 'Property values were not valid: hs_timestamp is required', 'VALIDATION_ERROR');
    if (type === 'contacts' && request.properties.email) {
      const existing = [...store.contacts.values()].find(
        (c) => c.properties.email?.toLowerCase() === String(request.properties.email).toLowerCase(),
      );
      if (existing) throw new HubSpotError(409, `Contact already exists. Existing ID: ${existing.id}`, 'CONFLICT');
    }
    const links = (request.associations ?? []).map((a) => {
      const to = String(a.to.id);
      const [kind] = a.types;
      // Calls API: a call is associated with a contact by HUBSPOT_DEFINED type 194 (call → contact).
      if (type !== 'calls' || kind!.associationCategory !== 'HUBSPOT_DEFINED' || kind!.associationTypeId !== 194) {
        throw new HubSpotError(
          400,
          `invalid association type ${kind!.associationCategory}/${kind!.associationTypeId} from ${type} to contacts`,
          'VALIDATION_ERROR',
        );
      }
      if (!store.contacts.has(to)) throw new HubSpotError(400, `No contacts with ID ${to} exist`, 'VALIDATION_ERROR');
      return { to, typeId: kind!.associationTypeId, category: kind!.associationCategory };
    });
    const object = make(type, strings(request.properties));
    object.associations.push(...links);
    return view(object);
  }

  /**
   * Associations v4, "Associate records without a label": the default type, call → contact 194; a second PUT changes
   * nothing.
   */
  function associateDefault(callId: string, contactId: string) {
    const call = store.calls.get(callId);
    if (!call || !store.contacts.has(contactId))
      throw new HubSpotError(
        404,
        `No ${call ? 'contact' : 'call'} with ID ${call ? contactId : callId} exists`,
        'OBJECT_NOT_FOUND',
      );
    if (!call.associations.some((a) => a.to === contactId))
      call.associations.push({ to: contactId, typeId: 194, category: 'HUBSPOT_DEFINED' });
    const at = new Date().toISOString();
    const associationSpec = { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 194 };
    return {
      status: 'COMPLETE',
      results: [{ from: { id: callId }, to: { id: contactId }, associationSpec }],
      startedAt: at,
      completedAt: at,
    };
  }

  function updateObject(type: ObjectType, id: string, request: z.output<typeof updateBody>) {
    const object = store[type].get(id);
    if (!object) throw new HubSpotError(404, 'Object not found.  objectId are usually numeric.', 'OBJECT_NOT_FOUND');
    for (const name of Object.keys(request.properties)) known(type, name, true);
    write(type, object, strings(request.properties));
    return view(object);
  }

  /** HubSpot refuses a property it does not have, and a write to one it calculates. */
  function known(type: ObjectType, name: string, writing: boolean): void {
    if (WRITABLE[type].has(name) || (!writing && CALCULATED[type].has(name))) return;
    const [error, message] = CALCULATED[type].has(name)
      ? ['READ_ONLY_VALUE', `"${name}" is a read only property; its value cannot be set.`]
      : ['PROPERTY_DOESNT_EXIST', `Property "${name}" does not exist`];
    throw new HubSpotError(
      400,
      `Property values were not valid: ${JSON.stringify([{ isValid: false, message, error, name, localizedErrorMessage: message }])}`,
      'VALIDATION_ERROR',
    );
  }

  function write(
    type: ObjectType,
    object: HubSpotObject,
    props: Record<string, string>,
    at = new Date().toISOString(),
  ): void {
    Object.assign(object.properties, props);
    object.updatedAt = at;
    const stamps = type === 'contacts' ? ['createdate', 'lastmodifieddate'] : ['hs_createdate', 'hs_lastmodifieddate'];
    object.properties[stamps[0]!] ??= object.createdAt;
    object.properties[stamps[1]!] = at;
    object.properties.hs_object_id = object.id;
    if (type === 'contacts') {
      const digits = (phone: string | undefined) => phone && searchableDigits(phone);
      const phone = digits(object.properties.phone);
      const mobile = digits(object.properties.mobilephone);
      if (phone) object.properties.hs_searchable_calculated_phone_number = phone;
      if (mobile) object.properties.hs_searchable_calculated_mobile_number = mobile;
    }
  }

  return {
    ...store,
    make,
    search: (type: ObjectType, body: unknown) => searchObjects(type, parse(searchBody, body)),
    upsert: (body: unknown) => upsert(parse(upsertBody, body)),
    create: (type: ObjectType, body: unknown) => createObject(type, parse(createBody, body)),
    update: (type: ObjectType, id: string, body: unknown) => updateObject(type, id, parse(updateBody, body)),
    associateDefault,
  };
}

/**
 * The digits of a typed number without its country code or national prefix: the fake's stand-in for HubSpot's
 * calculated property.
 */
function searchableDigits(phone: string): string | undefined {
  const parsed = phone.trim().startsWith('+') ? parsePhoneNumberFromString(phone) : undefined;
  const digits = parsed ? String(parsed.nationalNumber) : phone.replace(/\D/g, '').replace(/^0+/, '');
  return digits === '' ? undefined : digits;
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HubSpotError(
    400,
    `Invalid input JSON: ${issue.path.join('.') || 'body'}: ${issue.message}`,
    'VALIDATION_ERROR',
  );
}

/** HubSpot keeps every property value as text. */
function strings(props: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(props)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
}

function view(object: HubSpotObject) {
  return {
    id: object.id,
    properties: { ...object.properties },
    createdAt: object.createdAt,
    updatedAt: object.updatedAt,
    archived: false,
  };
}
