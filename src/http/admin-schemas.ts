import { z } from 'zod';
import { RULE_NAMES } from '../alerts/config.js';
import { AUDIT_ACTIONS } from '../operators/audit.js';
import { ROLES } from '../operators/roles.js';
import { PLATFORM_NAMES } from '../platforms/platform.js';
import { RECORD_SOURCES } from '../record.js';
import { NO_PLATFORM, timeBound } from '../store/admin-query.js';

/**
 * What each admin route takes (docs/reference.md#operating), as zod schemas written once: the router validates requests
 * with them (admin.ts) and the OpenAPI document's parameters and request bodies are generated from them
 * (openapi.ts, with z.toJSONSchema), so a parameter cannot be accepted without being documented, or the reverse.
 * A description given with `.describe()` is the parameter's description in the document.
 */

const STATES = ['pending', 'in_flight', 'done', 'dead'] as const;
const limit = z.coerce.number().int().min(1).max(500).default(50).describe('1 to 500, default 50');
const cursor = z.coerce.number().int().min(0).optional().describe('Cursor: the `next` of the previous page');

/** A date or an ISO timestamp, checked here so a bad one is a 400 naming the parameter, not a store error. */
const timeParam = (name: 'from' | 'to', description: string) =>
  z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        timeBound(value, name);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe(description);

const order = z
  .enum(['asc', 'desc'])
  .optional()
  .describe('asc (oldest first, the default) or desc (newest first); `after` follows it');
const pathParam = <N extends string>(name: N, description: string) =>
  z.strictObject({ [name]: z.string().describe(description) } as Record<N, z.ZodString>);

export const callId = pathParam('id', 'Record id');
export const receiptId = pathParam('id', 'Receipt id');
export const deliveryId = pathParam('id', 'Delivery id');
export const sinkName = pathParam('name', 'Sink name');
export const jobId = pathParam('id', 'Job id, as the request that started the job answered it');
export const incidentId = pathParam('id', 'Incident id');
export const userEmail = pathParam('email', "The user's e-mail address, any case");
export const tokenId = pathParam('id', 'Token id, as GET /admin/users lists it');

// docs/reference.md#operators. A role is checked by the user operations, as for the dashboard and the CLI, so each
// says the same of a wrong one; the document still lists the roles.
const role = z.string().describe(ROLES.join(', '));

export const addUserBody = z.strictObject({
  email: z.string().describe('Their e-mail address (trimmed, lower-cased)'),
  role,
  password: z
    .string()
    .optional()
    .describe('At least 12 characters; without it the reply holds a one-time link (24 hours) to set one'),
});

export const setRoleBody = z.strictObject({ role });

export const tokenBody = z.strictObject({
  name: z.string().optional().describe('What the token is for (1 to 100 characters); token-<date> by default'),
});

export const auditQuery = z.strictObject({
  actor: z.string().optional().describe("Who: a user's address, admin-token, cli"),
  action: z
    .enum(AUDIT_ACTIONS)
    .optional()
    .describe(`What was done: ${AUDIT_ACTIONS.join(', ')}`),
  target: z.string().optional().describe("What it touched: a call's id, a sink's name, a user's address …"),
  from: timeParam('from', 'From this date (that day in `timezone`) or ISO timestamp, included'),
  to: timeParam('to', 'Up to this date (that day included) or ISO timestamp (excluded)'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('1 to 1000, default 100'),
  before: z.coerce.number().int().min(1).optional().describe('Cursor: the `next` of the previous page (older entries)'),
});

export const callsQuery = z.strictObject({
  hook: z.string().optional().describe('Only this hook'),
  status: z.enum(['accepted', 'held']).optional().describe('accepted or held'),
  source: z
    .enum(RECORD_SOURCES)
    .optional()
    .describe('Where the call came from; replay or simulate lists that test traffic, which is otherwise left out'),
  platform: z
    .enum([NO_PLATFORM, ...PLATFORM_NAMES])
    .optional()
    .describe(`The voice platform that sent the call; ${NO_PLATFORM}: the calling service's calls`),
  outcome: z.string().optional().describe('data.call_outcome, ignoring case'),
  sentiment: z.string().optional().describe('data.sentiment_analysis, ignoring case'),
  phone: z
    .string()
    .optional()
    .describe('The caller, the number written any way: read as intake reads it, then compared in E.164'),
  recording_url: z.string().optional().describe('data.recording_url, exactly'),
  from: timeParam('from', 'Received at or after (ISO date or timestamp)'),
  to: timeParam('to', 'Received before (ISO date or timestamp)'),
  q: z.string().optional().describe('Text anywhere in the record'),
  // docs/reference.md#dashboard: the review queue, held calls and calls with problems not marked reviewed.
  review: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe(
      'true: the review queue, held calls and calls with problems not marked reviewed at their revision (use the default order, oldest first)',
    ),
  // docs/reference.md#test-traffic: listed only when asked for.
  test_calls: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .describe(
      'true: list test traffic too (source replay or simulate), which is left out by default unless `source` names it',
    ),
  after: z.string().optional().describe('Cursor: the `next` of the previous page'),
  order,
  limit,
});

/** docs/reference.md#editing-a-call: the fields named and their new values; null (or "") empties one. */
export const editBody = z.strictObject({
  data: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .refine((data) => Object.keys(data).length > 0, 'name at least one field to change')
    .meta({
      minProperties: 1,
      description: 'Declared fields of the hook and their new values; null or "" empties one',
    }),
});

export const receiptsQuery = z.strictObject({
  outcome: z
    .enum(['accepted', 'held', 'duplicate', 'rejected', 'in-call', 'ignored'])
    .optional()
    .describe('accepted, held, duplicate, rejected or in-call'),
  hook: z.string().optional().describe('Only this hook'),
  from: timeParam('from', 'Received at or after (ISO date or timestamp)'),
  to: timeParam('to', 'Received before (ISO date or timestamp)'),
  after: cursor,
  order,
  limit,
});

/**
 * docs/reference.md#refused-requests: the body as text, or in base64 for bytes that are not UTF-8; the content type as
 * it is to be read.
 */
export const ingestBody = z
  .strictObject({
    body: z.string().optional().describe('The corrected body, as text'),
    body_base64: z.base64().optional().describe('The corrected body, for bytes that are not UTF-8'),
    content_type: z.string().nullable().optional().describe('The content type to read the body as'),
  })
  .refine((b) => b.body === undefined || b.body_base64 === undefined, 'give body or body_base64, not both');

export const deliveriesQuery = z.strictObject({
  state: z.enum(STATES).optional().describe('pending, in_flight, done or dead'),
  sink: z.string().optional().describe('Only this sink'),
  call: z.string().optional().describe('Only this call'),
  after: cursor,
  limit,
});

export const redeliverBody = z.strictObject({
  sinks: z
    .array(z.string())
    .min(1)
    .optional()
    .describe(
      'Default: every sink of the hook that wants the call. A test call (source replay or simulate) goes only to sinks that take test traffic: naming another is refused with 400',
    ),
});

export const retryBody = z.strictObject({
  state: z
    .enum(['dead', 'pending'])
    .default('dead')
    .describe('Which deliveries: dead (the default) or pending ones made due now'),
  sink: z.string().optional().describe('Only this sink'),
  call_id: z.string().optional().describe('Only this call'),
  ids: z.array(z.number().int().positive()).min(1).optional().describe('Only these deliveries'),
});

/**
 * docs/reference.md#a-period-to-one-sink: the period whose calls are sent to the sink. A date is a day in the config's `timezone`,
 * `to`'s included; a timestamp is an instant, `to`'s excluded. The operation reads them (admin/period-redelivery.ts),
 * as it reads a date in the zone, and refuses one it cannot read with a 400 naming it.
 */
export const periodBody = z.strictObject({
  from: z.string().describe('First day (YYYY-MM-DD, in the configured timezone) or ISO timestamp'),
  to: z
    .string()
    .optional()
    .describe(
      'Last day, included (YYYY-MM-DD), or ISO timestamp, excluded; default: when the job starts, which it never passes',
    ),
  dry_run: z.boolean().default(false).describe('true: count what would be sent, and send nothing'),
});

/** docs/reference.md#alerts: newest first, open or resolved, of one rule. */
export const incidentsQuery = z.strictObject({
  state: z.enum(['open', 'resolved']).optional().describe('open or resolved'),
  rule: z
    .enum(RULE_NAMES)
    .optional()
    .describe(`Only this rule: ${RULE_NAMES.join(', ')}`),
  after: z.string().optional().describe('Cursor: the `next` of the previous page'),
  limit,
});

/** docs/reference.md#access: the person, by their number written any way, or their address. */
const personFields = {
  phone: z
    .string()
    .optional()
    .describe('Their phone number, written any way: read as intake reads it (without a country code, in phone_region)'),
  email: z.string().optional().describe('Their e-mail address, compared trimmed and without regard to case'),
};
export const personQuery = z.strictObject(personFields);

/** docs/reference.md#erasure. */
export const eraseBody = z.strictObject({
  ...personFields,
  dry_run: z.boolean().default(false).describe('true: count what would be erased, and erase nothing'),
});

type ObjectSchema = z.ZodObject;

/** What one admin route takes: path parameters, query parameters and a JSON body, each optional. */
export interface AdminRequest {
  params?: ObjectSchema;
  query?: ObjectSchema;
  body?: z.ZodType;
  /** A body the route cannot do without (an empty one is `{}`, which its schema refuses). */
  bodyRequired?: boolean;
}

/**
 * Every admin route by method and path as the document writes it (`{id}`, under `/admin`), with what it takes. The
 * router and the document are both checked against this table (openapi.test.ts).
 */
export const adminRequests = {
  'get /admin/openapi.json': {},
  'get /admin/calls': { query: callsQuery },
  'get /admin/calls/{id}': { params: callId },
  'patch /admin/calls/{id}': { params: callId, body: editBody, bodyRequired: true },
  'post /admin/calls/{id}/reviewed': { params: callId },
  'post /admin/calls/{id}/redeliver': { params: callId, body: redeliverBody },
  'post /admin/calls/{id}/release': { params: callId },
  'get /admin/receipts': { query: receiptsQuery },
  'get /admin/receipts/{id}': { params: receiptId },
  'post /admin/receipts/{id}/ingest': { params: receiptId, body: ingestBody },
  'get /admin/deliveries': { query: deliveriesQuery },
  'post /admin/deliveries/retry': { body: retryBody },
  'post /admin/deliveries/{id}/retry': { params: deliveryId },
  'get /admin/sinks': {},
  'post /admin/sinks/{name}/pause': { params: sinkName },
  'post /admin/sinks/{name}/resume': { params: sinkName },
  'post /admin/sinks/{name}/redeliver': { params: sinkName, body: periodBody, bodyRequired: true },
  'get /admin/jobs/{id}': { params: jobId },
  'get /admin/incidents': { query: incidentsQuery },
  'get /admin/incidents/{id}': { params: incidentId },
  'post /admin/incidents/{id}/ack': { params: incidentId },
  'get /admin/people': { query: personQuery },
  'post /admin/erase': { body: eraseBody, bodyRequired: true },
  'get /admin/erasures': { query: personQuery },
  'get /admin/users': {},
  'post /admin/users': { body: addUserBody, bodyRequired: true },
  'patch /admin/users/{email}': { params: userEmail, body: setRoleBody, bodyRequired: true },
  'delete /admin/users/{email}': { params: userEmail },
  'post /admin/users/{email}/reset': { params: userEmail },
  'post /admin/users/{email}/tokens': { params: userEmail, body: tokenBody },
  'delete /admin/tokens/{id}': { params: tokenId },
  'get /admin/audit': { query: auditQuery },
} as const satisfies Record<string, AdminRequest>;

export type AdminRouteKey = keyof typeof adminRequests;

/** A JSON Schema (2020-12, as OpenAPI 3.1 takes it) of what a request may carry: the input side of a schema. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  return rest;
}

export interface ParameterObject {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
}

/** The OpenAPI parameters of a route, one per key of its params and query schemas, in the schemas' order. */
export function parametersOf({ params, query }: AdminRequest): ParameterObject[] {
  const of = (schema: ObjectSchema | undefined, where: 'path' | 'query') => {
    if (!schema) return [];
    const json = jsonSchemaOf(schema) as { properties: Record<string, Record<string, unknown>>; required?: string[] };
    return Object.entries(json.properties).map(([name, { description, ...property }]) => ({
      name,
      in: where,
      // OpenAPI: a path parameter is always required.
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: property,
    }));
  };
  return [...of(params, 'path'), ...of(query, 'query')];
}
