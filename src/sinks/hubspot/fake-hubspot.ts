import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';

/**
 * A local stand-in for the HubSpot CRM API, for tests only: exactly the requests the hubspot sink makes, checked as
 * HubSpot documents them (bearer token, scopes, body shapes, property names, association type), answered in
 * HubSpot's shapes, its objects kept in memory. Documentation followed:
 * - contacts and batch upsert: https://developers.hubspot.com/docs/api/crm/contacts,
 *   https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/batch/upsert-contacts
 * - search: https://developers.hubspot.com/docs/api/crm/search (filterGroups ORed, at most 5; a new object is
 *   searchable only after a few seconds: `indexLagMs`)
 * - calls: https://developers.hubspot.com/docs/api/crm/calls (association call → contact, HUBSPOT_DEFINED 194)
 * - associations v4, default association: https://developers.hubspot.com/docs/api/crm/associations
 * - errors: https://developers.hubspot.com/docs/api/error-handling (`{status, message, correlationId, category}`)
 * - limits: https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines (429 with `errorType:
 *   RATE_LIMIT` and `policyName`, `X-HubSpot-RateLimit-*` headers on every response but the searches')
 */

export interface HubSpotObject {
  id: string;
  properties: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  /** Associations made with this object: to whom, by which type. */
  associations: { to: string; typeId: number; category: string }[];
}

export type Failure = 'rate-limit' | 'search-rate-limit' | 'server-error' | 'lost-reply';

export interface Seen {
  /** When it arrived (ms since the epoch). */
  at: number;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface FakeHubSpot {
  url: string;
  token: string;
  contacts: Map<string, HubSpotObject>;
  calls: Map<string, HubSpotObject>;
  requests: Seen[];
  /** A contact as if someone had typed it into HubSpot, searchable at once; `modifiedAt` sets its last change. */
  addContact(properties: Record<string, string>, options?: { modifiedAt?: string }): string;
  /** The next `times` requests whose `METHOD path` matches `on` fail that way. */
  fail(failure: Failure, options?: { times?: number; on?: RegExp }): void;
  /** The private app's token is deleted (401 INVALID_AUTHENTICATION) or expired (401 EXPIRED_AUTHENTICATION). */
  revoke(how?: 'revoked' | 'expired'): void;
  /** The token works again. */
  restore(): void;
  scopes: Set<string>;
  close(): Promise<void>;
}

const READ = 'crm.objects.contacts.read';
const WRITE = 'crm.objects.contacts.write';

/** The default properties the sink may write, and the read-only ones HubSpot calculates (writing one is refused). */
const WRITABLE = {
  contacts: new Set(['email', 'firstname', 'lastname', 'phone', 'mobilephone', 'company', 'jobtitle', 'lifecyclestage', 'hs_lead_status', 'city', 'country']),
  calls: new Set(['hs_timestamp', 'hs_call_title', 'hs_call_body', 'hs_call_duration', 'hs_call_status', 'hs_call_recording_url', 'hs_call_direction', 'hs_call_from_number', 'hs_call_to_number', 'hubspot_owner_id']),
};
const CALCULATED = {
  contacts: new Set(['hs_object_id', 'createdate', 'lastmodifieddate', 'hs_searchable_calculated_phone_number', 'hs_searchable_calculated_mobile_number']),
  calls: new Set(['hs_object_id', 'hs_createdate', 'hs_lastmodifieddate']),
};
type ObjectType = keyof typeof WRITABLE;

const value = z.union([z.string(), z.number(), z.boolean()]);
const properties = z.record(z.string(), value.nullable());
const searchBody = z.strictObject({
  filterGroups: z.array(z.strictObject({
    filters: z.array(z.strictObject({
      propertyName: z.string(),
      operator: z.enum(['EQ', 'NEQ', 'IN', 'NOT_IN', 'HAS_PROPERTY', 'NOT_HAS_PROPERTY', 'LT', 'LTE', 'GT', 'GTE', 'CONTAINS_TOKEN']),
      value: value.optional(),
      values: z.array(value).max(100).optional(),
    })).min(1).max(10),
  })).max(5).refine((groups) => groups.reduce((n, g) => n + g.filters.length, 0) <= 25, 'at most 25 filters in all'),
  properties: z.array(z.string()).optional(),
  sorts: z.array(z.strictObject({ propertyName: z.string(), direction: z.enum(['ASCENDING', 'DESCENDING']) })).max(1).optional(),
  limit: z.number().int().min(1).max(200).optional(),
  after: z.union([z.string(), z.number()]).optional(),
});
const upsertBody = z.strictObject({
  inputs: z.array(z.strictObject({ id: z.string().min(1), idProperty: z.literal('email'), properties, objectWriteTraceId: z.string().optional() })).min(1).max(100),
});
const association = z.strictObject({
  to: z.strictObject({ id: z.union([z.string(), z.number()]) }),
  types: z.array(z.strictObject({ associationCategory: z.enum(['HUBSPOT_DEFINED', 'USER_DEFINED', 'INTEGRATOR_DEFINED']), associationTypeId: z.number().int() })).min(1),
});
const createBody = z.strictObject({ properties, associations: z.array(association).optional() });
const updateBody = z.strictObject({ properties });

class HubSpotError extends Error {
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

export async function startFakeHubSpot({ indexLagMs = 0, rateLimitIntervalMs = 10_000 }: { indexLagMs?: number; rateLimitIntervalMs?: number } = {}): Promise<FakeHubSpot> {
  const token = `pat-na1-${randomUUID()}`;
  let tokenState: 'valid' | 'revoked' | 'expired' = 'valid';
  const store = { contacts: new Map<string, HubSpotObject>(), calls: new Map<string, HubSpotObject>() };
  const requests: Seen[] = [];
  const failures: { failure: Failure; on: RegExp }[] = [];
  const scopes = new Set([READ, WRITE]);
  /** When each object became searchable (its creation plus the index's lag). */
  const searchableAt = new Map<HubSpotObject, number>();
  let nextId = 1001;

  const make = (type: ObjectType, props: Record<string, string>, at = new Date().toISOString(), lag = indexLagMs): HubSpotObject => {
    const object: HubSpotObject = { id: String(nextId++), properties: {}, createdAt: at, updatedAt: at, associations: [] };
    write(type, object, props, at);
    store[type].set(object.id, object);
    searchableAt.set(object, Date.parse(at) + lag);
    return object;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = Symbol('invalid');
      }
      requests.push({ at: Date.now(), method: req.method ?? '', path, headers: req.headers, body });
      const search = path.endsWith('/search');
      const index = failures.findIndex((f) => f.on.test(`${req.method} ${path}`));
      const [failure] = index === -1 ? [] : failures.splice(index, 1);
      try {
        if (failure?.failure === 'rate-limit') {
          throw new HubSpotError(429, 'You have reached your ten_secondly_rolling limit.', '', { errorType: 'RATE_LIMIT', policyName: 'TEN_SECONDLY_ROLLING', headers: { 'x-hubspot-ratelimit-remaining': '0' } });
        }
        if (failure?.failure === 'search-rate-limit') throw new HubSpotError(429, 'You have reached your secondly limit.', '', { errorType: 'RATE_LIMIT', policyName: 'SECONDLY' });
        if (failure?.failure === 'server-error') throw new HubSpotError(502, 'Bad Gateway', 'INTERNAL_ERROR');
        const reply = route(req, path, body);
        if (failure?.failure === 'lost-reply') {
          // HubSpot did the work; the answer never arrives.
          res.socket?.destroy();
          return;
        }
        send(res, reply.status, reply.body, search ? {} : rateHeaders());
      } catch (err) {
        if (!(err instanceof HubSpotError)) throw err;
        const { headers = {}, ...extra } = err.extra as { headers?: Record<string, string> };
        const category = err.category ? { category: err.category } : {};
        send(res, err.status, { status: 'error', message: err.message, correlationId: randomUUID(), ...extra, ...category }, search ? {} : { ...rateHeaders(), ...headers });
      }
    });
  });

  function rateHeaders(): Record<string, string> {
    return {
      'x-hubspot-ratelimit-daily': '250000',
      'x-hubspot-ratelimit-daily-remaining': String(250000 - requests.length),
      'x-hubspot-ratelimit-interval-milliseconds': String(rateLimitIntervalMs),
      'x-hubspot-ratelimit-max': '100',
      'x-hubspot-ratelimit-remaining': '99',
    };
  }

  function route(req: IncomingMessage, path: string, body: unknown): { status: number; body: unknown } {
    checkToken(req.headers.authorization);
    if (typeof body === 'symbol') throw new HubSpotError(400, 'Invalid input JSON on line 1, column 1: Unexpected character', 'VALIDATION_ERROR');
    if (body !== undefined && !/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new HubSpotError(415, 'Unsupported Media Type', 'VALIDATION_ERROR');
    const v4 = /^\/crm\/v4\/objects\/calls\/([^/]+)\/associations\/default\/contacts\/([^/]+)$/.exec(path);
    if (v4 && req.method === 'PUT') {
      needScope(WRITE);
      return { status: 200, body: associateDefault(v4[1]!, v4[2]!) };
    }
    const match = /^\/crm\/v3\/objects\/(contacts|calls)(?:\/(search|batch\/upsert|[^/]+))?$/.exec(path);
    if (!match) throw new HubSpotError(404, `No route for ${req.method} ${path}`, 'OBJECT_NOT_FOUND');
    const type = match[1] as ObjectType;
    const rest = match[2];
    needScope(req.method === 'POST' && rest === 'search' ? READ : WRITE);
    if (req.method === 'POST' && rest === 'search') return { status: 200, body: searchObjects(type, parse(searchBody, body)) };
    if (req.method === 'POST' && rest === 'batch/upsert' && type === 'contacts') return { status: 200, body: upsert(parse(upsertBody, body)) };
    if (req.method === 'POST' && rest === undefined) return { status: 201, body: createObject(type, parse(createBody, body)) };
    if (req.method === 'PATCH' && rest !== undefined) return { status: 200, body: updateObject(type, rest, parse(updateBody, body)) };
    throw new HubSpotError(405, `${req.method} is not allowed on ${path}`, 'VALIDATION_ERROR');
  }

  function checkToken(header: string | undefined): void {
    const presented = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    if (presented === token && tokenState === 'expired') throw new HubSpotError(401, 'The OAuth token used to make this call expired 1 day(s) ago.', 'EXPIRED_AUTHENTICATION');
    if (presented !== token || tokenState === 'revoked') {
      throw new HubSpotError(401, 'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview', 'INVALID_AUTHENTICATION');
    }
  }

  function needScope(scope: string): void {
    if (scopes.has(scope)) return;
    throw new HubSpotError(403, "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.", 'MISSING_SCOPES', {
      errors: [{ message: 'One or more of the following scopes are required.', context: { requiredGranularScopes: [scope] } }],
      links: { scopes: 'https://developers.hubspot.com/scopes' },
    });
  }

  function searchObjects(type: ObjectType, request: z.output<typeof searchBody>) {
    for (const filter of request.filterGroups.flatMap((g) => g.filters)) known(type, filter.propertyName, false);
    const now = Date.now();
    const same = (a: unknown, b: unknown) => String(a).toLowerCase() === String(b).toLowerCase();
    const matches = (object: HubSpotObject) => request.filterGroups.length === 0 || request.filterGroups.some((group) => group.filters.every((f) => {
      const have = object.properties[f.propertyName];
      if (f.operator === 'EQ') return have !== undefined && same(have, f.value);
      if (f.operator === 'IN') return have !== undefined && (f.values ?? []).some((v) => same(have, v));
      if (f.operator === 'HAS_PROPERTY') return have !== undefined && have !== '';
      throw new HubSpotError(400, `the fake does not implement ${f.operator}`, 'VALIDATION_ERROR');
    }));
    const found = [...store[type].values()].filter((o) => (searchableAt.get(o) ?? 0) <= now && matches(o));
    const [sort] = request.sorts ?? [];
    if (sort) {
      const key = (o: HubSpotObject) => o.properties[sort.propertyName] ?? '';
      found.sort((a, b) => (sort.direction === 'ASCENDING' ? 1 : -1) * key(a).localeCompare(key(b)));
    }
    const limit = request.limit ?? 10;
    const shown = new Set([...(request.properties ?? []), ...(type === 'contacts' ? ['createdate', 'lastmodifieddate', 'hs_object_id'] : ['hs_createdate', 'hs_lastmodifieddate', 'hs_object_id'])]);
    return {
      total: found.length,
      results: found.slice(0, limit).map((o) => ({ ...view(o), properties: Object.fromEntries(Object.entries(o.properties).filter(([k]) => shown.has(k))) })),
      ...(found.length > limit && { paging: { next: { after: String(limit) } } }),
    };
  }

  function upsert(request: z.output<typeof upsertBody>) {
    const startedAt = new Date().toISOString();
    const results = request.inputs.map((input) => {
      for (const name of Object.keys(input.properties)) known('contacts', name, true);
      const existing = [...store.contacts.values()].find((c) => c.properties.email?.toLowerCase() === input.id.toLowerCase());
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
    if (type === 'calls' && request.properties.hs_timestamp === undefined) throw new HubSpotError(400, 'Property values were not valid: hs_timestamp is required', 'VALIDATION_ERROR');
    if (type === 'contacts' && request.properties.email) {
      const existing = [...store.contacts.values()].find((c) => c.properties.email?.toLowerCase() === String(request.properties.email).toLowerCase());
      if (existing) throw new HubSpotError(409, `Contact already exists. Existing ID: ${existing.id}`, 'CONFLICT');
    }
    const links = (request.associations ?? []).map((a) => {
      const to = String(a.to.id);
      const [kind] = a.types;
      // Calls API: a call is associated with a contact by HUBSPOT_DEFINED type 194 (call → contact).
      if (type !== 'calls' || kind!.associationCategory !== 'HUBSPOT_DEFINED' || kind!.associationTypeId !== 194) {
        throw new HubSpotError(400, `invalid association type ${kind!.associationCategory}/${kind!.associationTypeId} from ${type} to contacts`, 'VALIDATION_ERROR');
      }
      if (!store.contacts.has(to)) throw new HubSpotError(400, `No contacts with ID ${to} exist`, 'VALIDATION_ERROR');
      return { to, typeId: kind!.associationTypeId, category: kind!.associationCategory };
    });
    const object = make(type, strings(request.properties));
    object.associations.push(...links);
    return view(object);
  }

  /** Associations v4, "Associate records without a label": the default type, call → contact 194; a second PUT changes nothing. */
  function associateDefault(callId: string, contactId: string) {
    const call = store.calls.get(callId);
    if (!call || !store.contacts.has(contactId)) throw new HubSpotError(404, `No ${call ? 'contact' : 'call'} with ID ${call ? contactId : callId} exists`, 'OBJECT_NOT_FOUND');
    if (!call.associations.some((a) => a.to === contactId)) call.associations.push({ to: contactId, typeId: 194, category: 'HUBSPOT_DEFINED' });
    const at = new Date().toISOString();
    const associationSpec = { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 194 };
    return { status: 'COMPLETE', results: [{ from: { id: callId }, to: { id: contactId }, associationSpec }], startedAt: at, completedAt: at };
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
    const [error, message] = CALCULATED[type].has(name) ? ['READ_ONLY_VALUE', `"${name}" is a read only property; its value cannot be set.`] : ['PROPERTY_DOESNT_EXIST', `Property "${name}" does not exist`];
    throw new HubSpotError(400, `Property values were not valid: ${JSON.stringify([{ isValid: false, message, error, name, localizedErrorMessage: message }])}`, 'VALIDATION_ERROR');
  }

  function write(type: ObjectType, object: HubSpotObject, props: Record<string, string>, at = new Date().toISOString()): void {
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

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    contacts: store.contacts,
    calls: store.calls,
    requests,
    scopes,
    addContact(props, { modifiedAt } = {}) {
      const at = modifiedAt ?? new Date().toISOString();
      return make('contacts', props, at, -Infinity).id;
    },
    fail(failure, { times = 1, on = /./ } = {}) {
      for (let i = 0; i < times; i++) failures.push({ failure, on });
    },
    revoke(how = 'revoked') {
      tokenState = how;
    },
    restore() {
      tokenState = 'valid';
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The digits of a typed number without its country code or national prefix: the fake's stand-in for HubSpot's calculated property. */
function searchableDigits(phone: string): string | undefined {
  const parsed = phone.trim().startsWith('+') ? parsePhoneNumberFromString(phone) : undefined;
  const digits = parsed ? String(parsed.nationalNumber) : phone.replace(/\D/g, '').replace(/^0+/, '');
  return digits === '' ? undefined : digits;
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new HubSpotError(400, `Invalid input JSON: ${issue.path.join('.') || 'body'}: ${issue.message}`, 'VALIDATION_ERROR');
}

/** HubSpot keeps every property value as text. */
function strings(props: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(props).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
}

function view(object: HubSpotObject) {
  return { id: object.id, properties: { ...object.properties }, createdAt: object.createdAt, updatedAt: object.updatedAt, archived: false };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...headers }).end(JSON.stringify(body));
}
