import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { CallhookError } from '../errors.js';
import type { Hook } from '../intake.js';
import type { KeyRing } from '../keys/ring.js';
import { maskBytes, secretMasker, type SecretList } from '../secrets.js';
import { ingestReceipt, receiptJson, type ReceiptsDeps } from '../admin/receipts.js';
import { listSinks, pauseSink, type ConfiguredSink, type SinksDeps } from '../admin/sinks.js';
import { callOperations } from '../admin/calls.js';
import { RECORD_SOURCES } from '../record.js';
import { timeBound } from '../store/admin-query.js';
import type { ReceiptInfo, Store } from '../store/store.js';
import type { AuthLimiter } from './auth-limit.js';
import { requireBearer } from './auth.js';
import { requestHeader } from './node-headers.js';
import { openApiDocument } from './openapi.js';
import { readBody } from './read-body.js';
import { requestIntakeOn } from './request-intake.js';

export interface AdminDeps {
  store: Store;
  /** A ring when callhook keeps the token (no CALLHOOK_ADMIN_TOKEN), read again while serving (keys/ring.ts). */
  adminToken: string | KeyRing;
  /** Masked out of every admin reply, whatever field they hide in; a set may grow while serving (kept keys). */
  secrets: SecretList;
  hooks: ReadonlyMap<string, Hook>;
  /** Every configured sink, the ones a redelivery may name. */
  sinkNames: readonly string[];
  /** The configured sinks with their types and configured `paused`, for /admin/sinks; by default from sinkNames. */
  sinks?: readonly ConfiguredSink[];
  /** Wakes the delivery worker after something became due. */
  notify: () => void;
  limiter?: AuthLimiter;
  /** Contract section 6: the limiter counts the last X-Forwarded-For hop, not the peer (client-address.ts). */
  trustProxy?: boolean;
  /** What a refused request ingested again may weigh, as at intake. */
  bodyLimitBytes: number;
  /** The phone filter reads a number as intake does (contract section 6), in this region when it has no country code. */
  phoneRegion?: string;
}

/** Contract section 6: an admin request body over 64 KiB is refused with 413 before it is parsed. */
export const ADMIN_BODY_LIMIT = 64 * 1024;

/** The body each admin request carried, read once under its route's limit before any route looks at it. */
type AdminEnv = { Variables: { body?: Uint8Array } };

const STATES = ['pending', 'in_flight', 'done', 'dead'] as const;
const limit = z.coerce.number().int().min(1).max(500).default(50);

/** A date or an ISO timestamp, checked here so a bad one is a 400 naming the parameter, not a store error. */
const timeParam = (name: 'from' | 'to') =>
  z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        timeBound(value, name);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    });

const order = z.enum(['asc', 'desc']).optional();

const callsQuery = z.strictObject({
  hook: z.string().optional(),
  status: z.enum(['accepted', 'held']).optional(),
  source: z.enum(RECORD_SOURCES).optional(),
  outcome: z.string().optional(),
  sentiment: z.string().optional(),
  phone: z.string().optional(),
  recording_url: z.string().optional(),
  from: timeParam('from'),
  to: timeParam('to'),
  q: z.string().optional(),
  // Contract section 11: the review queue, held calls and calls with problems not marked reviewed.
  review: z.enum(['true', 'false']).transform((v) => v === 'true').optional(),
  after: z.string().optional(),
  order,
  limit,
});
/** Contract section 11: the fields named and their new values; null (or "") empties one. */
const editBody = z.strictObject({
  data: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .refine((data) => Object.keys(data).length > 0, 'name at least one field to change'),
});
const receiptsQuery = z.strictObject({
  outcome: z.enum(['accepted', 'held', 'duplicate', 'rejected', 'in-call']).optional(),
  hook: z.string().optional(),
  from: timeParam('from'),
  to: timeParam('to'),
  after: z.coerce.number().int().min(0).optional(),
  order,
  limit,
});
/** Contract section 6: the body as text, or in base64 for bytes that are not UTF-8; the content type as it is to be read. */
const ingestBody = z
  .strictObject({ body: z.string().optional(), body_base64: z.base64().optional(), content_type: z.string().nullable().optional() })
  .refine((b) => b.body === undefined || b.body_base64 === undefined, 'give body or body_base64, not both');
const deliveriesQuery = z.strictObject({
  state: z.enum(STATES).optional(),
  sink: z.string().optional(),
  call: z.string().optional(),
  after: z.coerce.number().int().min(0).optional(),
  limit,
});
const redeliverBody = z.strictObject({ sinks: z.array(z.string()).min(1).optional() });
const retryBody = z.strictObject({
  state: z.enum(['dead', 'pending']).default('dead'),
  sink: z.string().optional(),
  call_id: z.string().optional(),
  ids: z.array(z.number().int().positive()).min(1).optional(),
});

/**
 * `/admin/*` behind its own bearer token: the webhook key never opens it (contract section 6). Calls, their raw
 * requests, receipts, attempts and edits; deliveries by state and sink; edit, review mark, redelivery, release and
 * bulk retry. The routes parse and answer; what an operation does is the admin/ module's (calls.ts, receipts.ts,
 * sinks.ts), which the dashboard calls too.
 */
export function adminRoutes({ store, adminToken, secrets, hooks, sinkNames, sinks, notify, limiter, trustProxy = false, bodyLimitBytes, phoneRegion = 'IN' }: AdminDeps): Hono<AdminEnv> {
  // The ingest of a refused request may carry up to body_limit (contract section 6), as JSON: a body that is not
  // text comes in base64, 4 bytes for every 3. Its decoded size is held to body_limit exactly by ingestReceipt.
  const ingestLimit = ADMIN_BODY_LIMIT + Math.ceil(bodyLimitBytes / 3) * 4;
  const receipts: ReceiptsDeps = { store, hooks, ingest: requestIntakeOn(store, hooks), bodyLimitBytes };
  const sinksDeps: SinksDeps = { store, sinks: sinks ?? sinkNames.map((name) => ({ name, type: 'unknown', pausedByDefault: false })) };
  const shown = (receipt: ReceiptInfo) => receiptJson(receipt, (bytes) => maskBytes(bytes, secrets));
  const mask = secretMasker(secrets);
  const reply = (value: unknown, status = 200) => new Response(mask(JSON.stringify(value)), { status, headers: { 'content-type': 'application/json' } });
  const calls = callOperations({ store, hooks, sinkNames, notify, phoneRegion });

  return new Hono<AdminEnv>()
    .use(requireBearer(typeof adminToken === 'string' ? [adminToken] : adminToken, limiter, trustProxy))
    // Every admin body is read here, whichever route it goes to, so one too large is refused before anything acts
    // on the request, also on a route that would never parse it. The ingest route's own limit comes first.
    .use('/receipts/:id/ingest', bodyUpTo(ingestLimit))
    .use(bodyUpTo(ADMIN_BODY_LIMIT))
    .get('/openapi.json', (c) => c.json(openApiDocument([...hooks.keys()])))
    .get('/calls', async (c) => {
      const { q, recording_url: recordingUrl, ...filters } = parseQuery(c, callsQuery);
      return reply(await calls.listCalls({ ...filters, recordingUrl, text: q }));
    })
    .get('/calls/:id', async (c) => {
      const call = await calls.showCall(c.req.param('id'));
      return reply({ ...call, receipts: call.receipts.map(shown) });
    })
    // Contract section 11: changes only the fields named, normalised as at intake; never redelivers by itself.
    .patch('/calls/:id', async (c) => reply(await calls.editCall(c.req.param('id'), await parseBody(c, editBody))))
    .post('/calls/:id/reviewed', async (c) => reply(await calls.markReviewed(c.req.param('id'))))
    .post('/calls/:id/redeliver', async (c) => {
      const { sinks } = await parseBody(c, redeliverBody);
      return reply(await calls.redeliverCall(c.req.param('id'), sinks));
    })
    .post('/calls/:id/release', async (c) => reply(await calls.releaseCall(c.req.param('id'))))
    .get('/receipts', async (c) => {
      const { limit: max, ...filters } = parseQuery(c, receiptsQuery);
      const page = await store.listReceiptPage({ ...filters, limit: max });
      return reply({ receipts: page.map(shown), next: page.length === max ? page.at(-1)!.id : null });
    })
    .get('/receipts/:id', async (c) => {
      const receipt = await store.getReceipt(receiptId(c.req.param('id')));
      if (!receipt) throw new CallhookError('NOT_FOUND', `no receipt with id ${c.req.param('id')}`);
      return reply(shown(receipt));
    })
    .post('/receipts/:id/ingest', async (c) => {
      const { body, body_base64, content_type } = await parseBody(c, ingestBody);
      const corrected = body !== undefined ? new TextEncoder().encode(body) : body_base64 !== undefined ? new Uint8Array(Buffer.from(body_base64, 'base64')) : undefined;
      const { receipt, reply: answer } = await ingestReceipt(receipts, receiptId(c.req.param('id')), { body: corrected, contentType: content_type });
      if (answer.status === 'accepted') notify();
      return reply({ ...answer, receipt });
    })
    .get('/deliveries', async (c) => {
      const { call, limit: max, ...filters } = parseQuery(c, deliveriesQuery);
      const deliveries = await store.listDeliveries({ ...filters, callId: call, limit: max });
      return reply({ deliveries, next: deliveries.length === max ? deliveries.at(-1)!.id : null });
    })
    .post('/deliveries/retry', async (c) => {
      const { call_id, ...query } = await parseBody(c, retryBody);
      const retried = await store.retryDeliveries({ ...query, callId: call_id });
      if (retried > 0) notify();
      return reply({ retried });
    })
    // Contract section 9: a pause is kept in the store, for every replica and every restart. A resume wakes this
    // process's worker now; another replica's looks at the outbox again within a second (worker.ts idleMs).
    .get('/sinks', async () => reply({ sinks: await listSinks(sinksDeps) }))
    .post('/sinks/:name/pause', async (c) => reply(await pauseSink(sinksDeps, c.req.param('name'), true)))
    .post('/sinks/:name/resume', async (c) => {
      const sink = await pauseSink(sinksDeps, c.req.param('name'), false);
      notify();
      return reply(sink);
    })
    .post('/deliveries/:id/retry', async (c) => {
      const id = Number(c.req.param('id'));
      if (!Number.isInteger(id) || id < 1) throw new CallhookError('NOT_FOUND', `no delivery with id ${c.req.param('id')}`);
      const retried = await store.retryDeliveries({ ids: [id], state: 'dead' });
      if (retried === 0) throw new CallhookError('CONFLICT', `delivery ${id} does not exist or is not dead`);
      notify();
      return reply({ retried });
    });
}

function receiptId(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1) throw new CallhookError('NOT_FOUND', `no receipt with id ${text}`);
  return id;
}

/** A parameter given empty (`?hook=&from=`, as a form leaves a field) is no filter, as if it were not given. */
function parseQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const given = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== ''));
  const parsed = schema.safeParse(given);
  if (!parsed.success) throw new CallhookError('BAD_REQUEST', describe(parsed.error));
  return parsed.data;
}

/**
 * Reads the request's body under `limit` (read-body.ts: by its Content-Length up front, or counted as a chunked
 * body streams in), 413 past it. A request that says it has no body is not read.
 */
function bodyUpTo(limit: number): MiddlewareHandler<AdminEnv> {
  return async function adminBody(c, next) {
    const declared = requestHeader(c, 'content-length');
    const sent = requestHeader(c, 'transfer-encoding') !== undefined || (declared !== undefined && declared !== '0');
    if (c.get('body') === undefined) c.set('body', sent ? await readBody(c, limit) : new Uint8Array(0));
    await next();
  };
}

async function parseBody<S extends z.ZodType>(c: Context<AdminEnv>, schema: S): Promise<z.output<S>> {
  // As c.req.text() reads it: a byte-order mark dropped, bytes that are not UTF-8 replaced.
  const text = new TextDecoder().decode(c.get('body'));
  let json: unknown = {};
  try {
    if (text.trim() !== '') json = JSON.parse(text);
  } catch (cause) {
    throw new CallhookError('BAD_REQUEST', 'the body is not JSON', { cause });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new CallhookError('BAD_REQUEST', describe(parsed.error));
  return parsed.data;
}

function describe(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.');
  return `${path}: ${issue.code === 'unrecognized_keys' ? 'unknown parameter' : issue.message}`;
}
