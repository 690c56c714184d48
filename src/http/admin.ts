import { zValidator } from '@hono/zod-validator';
import { Hono, type MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { auditedOperations } from '../admin/audited.js';
import type { AdminOperations } from '../admin/operations.js';
import { correctionOf, receiptJson } from '../admin/receipts.js';
import { CallhookError } from '../errors.js';
import type { Intake } from '../intake/intake.js';
import type { KeyRing } from '../keys/ring.js';
import { type ActorEnv, allow } from '../operators/guard.js';
import type { Actor, Role } from '../operators/roles.js';
import { maskBytes, type SecretList, secretMasker } from '../secrets.js';
import type { ReceiptInfo } from '../store/admin-queries.js';
import { timeBound } from '../store/admin-query.js';
import type { OperatorStore } from '../store/operators.js';
import { publicOrigin } from '../web/origin.js';
import { createClock, nextDay } from '../web/time.js';
import { requestActor } from './actor.js';
import { adminAuth } from './admin-auth.js';
import { adminRequests as on } from './admin-schemas.js';
import type { AuthLimiter } from './auth-limit.js';
import { requestHeader } from './node-headers.js';
import { openApiDocument } from './openapi.js';
import { readBody } from './read-body.js';

export interface AdminDeps {
  /** What each route does, built once by serve and shared with the dashboard (admin/operations.ts). */
  admin: AdminOperations;
  /** The configured hooks, whose webhook paths the OpenAPI document lists. */
  intake: Pick<Intake, 'hooks'>;
  /** A ring when callhook keeps the token (no CALLHOOK_ADMIN_TOKEN), read again while serving (keys/ring.ts). */
  adminToken: string | KeyRing;
  /** Who a personal token is, and its last use (docs/reference.md#operators). */
  tokens: Pick<OperatorStore, 'findToken' | 'touchToken'>;
  /** The config's `public_url`: the origin of the one-time links; the request's own when not set. */
  publicUrl?: string;
  /** Masked out of every admin reply, whatever field they hide in; a set may grow while serving (kept keys). */
  secrets: SecretList;
  limiter?: AuthLimiter;
  /** docs/reference.md#exposure: the limiter counts the last X-Forwarded-For hop, not the peer (client-address.ts). */
  trustProxy?: boolean;
  /** What a refused request ingested again may weigh, as at intake. */
  bodyLimitBytes: number;
  /**
   * docs/reference.md#dashboard: the operator's zone (the server's own by default): the dashboard shows times in it,
   * and a date given as `from` / `to` here and on the pages is that day in it.
   */
  timezone?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** docs/reference.md#refused-requests: an admin request body over 64 KiB is refused with 413 before it is parsed. */
export const ADMIN_BODY_LIMIT = 64 * 1024;

/**
 * The body each admin request carried, read once under its route's limit before any route looks at it, and who made
 * the request (admin-auth.ts).
 */
type AdminEnv = { Variables: ActorEnv['Variables'] & { body?: Uint8Array } };

/**
 * `/admin/*` behind its own bearer token: the webhook key never opens it (docs/reference.md#refused-requests). Calls,
 * their raw requests, receipts, attempts and edits; deliveries by state and sink; edit, review mark, redelivery,
 * release and bulk retry; the alerts' incidents and their acknowledgement. The routes validate (admin-schemas.ts) and
 * answer, masked; what an operation does is the admin/ module's (calls.ts, deliveries.ts, receipts.ts, sinks.ts,
 * incidents.ts), which the dashboard and the CLI call too.
 *
 * docs/reference.md#operators: every route names the role it needs as its first handler (`allow`); a request beyond the
 * role is refused with 403 before anything of the route runs, and kept in the audit log as `forbidden`. What a route
 * changes it changes through the operations as its actor does them (admin/audited.ts), so each change is kept too.
 */
export function adminRoutes({
  admin,
  intake: { hooks },
  adminToken,
  tokens,
  publicUrl,
  secrets,
  limiter,
  trustProxy = false,
  bodyLimitBytes,
  timezone,
}: AdminDeps): Hono<AdminEnv> {
  // Every change made through the routes, and every request refused for its role, is kept in the audit log.
  const { users, audit } = admin;
  const as = auditedOperations(admin, audit);
  /** The operations as this request's actor does them. */
  const ops = (c: { get(key: 'actor'): Actor }) => as(c.get('actor'));
  const need = (role: Role) =>
    allow<AdminEnv>(role, (actor, method, path) => audit.record(actor, 'forbidden', `${method} ${path}`, 'FORBIDDEN'));
  const viewer = need('viewer');
  const operator = need('operator');
  const adminOnly = need('admin');
  // A one-time link points at the dashboard as the person who opens it reaches it: public_url, else this request's.
  const linkOrigin = (c: Parameters<typeof publicOrigin>[0]) => {
    if (publicUrl !== undefined) return publicUrl;
    const { scheme, host } = publicOrigin(c, trustProxy);
    return `${scheme ?? new URL(c.req.url).protocol.slice(0, -1)}://${host}`;
  };
  // The ingest of a refused request may carry up to body_limit (docs/reference.md#refused-requests), as JSON: a body
  // that is not text comes in base64, 4 bytes for every 3. Its decoded size is held to body_limit exactly by
  // ingestReceipt.
  const ingestLimit = ADMIN_BODY_LIMIT + Math.ceil(bodyLimitBytes / 3) * 4;
  // A date (YYYY-MM-DD) is that day where the operator is, from its midnight there; a time is taken as written.
  const clock = createClock(timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone);
  const inZone = (value: string | undefined) =>
    value !== undefined && DAY.test(value) ? (clock.dayStart(value) ?? value) : value;
  const shown = (receipt: ReceiptInfo) => receiptJson(receipt, (bytes) => maskBytes(bytes, secrets));
  const mask = secretMasker(secrets);
  const reply = (value: unknown, status = 200) =>
    new Response(mask(JSON.stringify(value)), { status, headers: { 'content-type': 'application/json' } });

  return (
    new Hono<AdminEnv>()
      .use(adminAuth<AdminEnv>({ adminToken, tokens, limiter, trustProxy }))
      // Every admin body is read here, whichever route it goes to, so one too large is refused before anything acts
      // on the request, also on a route that would never parse it. The ingest route's own limit comes first.
      .use('/receipts/:id/ingest', bodyUpTo(ingestLimit))
      .use(bodyUpTo(ADMIN_BODY_LIMIT))
      .get('/openapi.json', viewer, (c) => c.json(openApiDocument([...hooks.keys()])))
      .get('/calls', viewer, query(on['get /admin/calls'].query), async (c) => {
        const { q, recording_url: recordingUrl, test_calls: testCalls, from, to, ...filters } = c.req.valid('query');
        return reply(
          await ops(c).calls.listCalls({
            ...filters,
            from: inZone(from),
            to: inZone(to),
            recordingUrl,
            text: q,
            testCalls,
          }),
        );
      })
      .get('/calls/:id', viewer, param(on['get /admin/calls/{id}'].params), async (c) => {
        const call = await ops(c).calls.showCall(c.req.valid('param').id);
        return reply({ ...call, receipts: call.receipts.map(shown) });
      })
      // docs/reference.md#dashboard: changes only the fields named, normalised as at intake; never redelivers.
      .patch(
        '/calls/:id',
        operator,
        param(on['patch /admin/calls/{id}'].params),
        json(on['patch /admin/calls/{id}'].body),
        async (c) => reply(await ops(c).calls.editCall(c.req.valid('param').id, c.req.valid('json'))),
      )
      .post('/calls/:id/reviewed', operator, param(on['post /admin/calls/{id}/reviewed'].params), async (c) =>
        reply(await ops(c).calls.markReviewed(c.req.valid('param').id)),
      )
      .post(
        '/calls/:id/redeliver',
        operator,
        param(on['post /admin/calls/{id}/redeliver'].params),
        json(on['post /admin/calls/{id}/redeliver'].body),
        async (c) => reply(await ops(c).calls.redeliverCall(c.req.valid('param').id, c.req.valid('json').sinks)),
      )
      .post('/calls/:id/release', operator, param(on['post /admin/calls/{id}/release'].params), async (c) =>
        reply(await ops(c).calls.releaseCall(c.req.valid('param').id)),
      )
      .get('/receipts', viewer, query(on['get /admin/receipts'].query), async (c) => {
        const { from, to, ...filters } = c.req.valid('query');
        const page = await ops(c).receipts.listReceipts({ ...filters, from: inZone(from), to: inZone(to) });
        return reply({ ...page, receipts: page.receipts.map(shown) });
      })
      .get('/receipts/:id', viewer, param(on['get /admin/receipts/{id}'].params), async (c) =>
        reply(shown(await ops(c).receipts.showReceipt(c.req.valid('param').id))),
      )
      .post(
        '/receipts/:id/ingest',
        operator,
        param(on['post /admin/receipts/{id}/ingest'].params),
        json(on['post /admin/receipts/{id}/ingest'].body),
        async (c) => {
          const { receipt, reply: answer } = await ops(c).receipts.ingestReceipt(
            c.req.valid('param').id,
            correctionOf(c.req.valid('json')),
          );
          return reply({ ...answer, receipt });
        },
      )
      .get('/deliveries', viewer, query(on['get /admin/deliveries'].query), async (c) => {
        const { call, ...filters } = c.req.valid('query');
        return reply(await ops(c).deliveries.listDeliveries({ ...filters, callId: call }));
      })
      .post('/deliveries/retry', operator, json(on['post /admin/deliveries/retry'].body), async (c) => {
        const { call_id, ...query } = c.req.valid('json');
        return reply(await ops(c).deliveries.retryDeliveries({ ...query, callId: call_id }));
      })
      // docs/reference.md#what-every-sink-shares: a pause is kept in the store, for every replica and every restart; a
      // resume wakes the worker.
      .get('/sinks', viewer, async (c) => reply({ sinks: await ops(c).sinks.listSinks() }))
      .post('/sinks/:name/pause', operator, param(on['post /admin/sinks/{name}/pause'].params), async (c) =>
        reply(await ops(c).sinks.pauseSink(c.req.valid('param').name, true)),
      )
      .post('/sinks/:name/resume', operator, param(on['post /admin/sinks/{name}/resume'].params), async (c) =>
        reply(await ops(c).sinks.pauseSink(c.req.valid('param').name, false)),
      )
      // docs/reference.md#a-period-to-one-sink: accepted at once, and done in the background by a job this serve keeps in memory.
      .post(
        '/sinks/:name/redeliver',
        operator,
        param(on['post /admin/sinks/{name}/redeliver'].params),
        json(on['post /admin/sinks/{name}/redeliver'].body),
        async (c) =>
          reply(
            { job: await ops(c).redeliveries.redeliverPeriod(c.req.valid('param').name, c.req.valid('json')) },
            202,
          ),
      )
      .get('/jobs/:id', viewer, param(on['get /admin/jobs/{id}'].params), async (c) =>
        reply(ops(c).redeliveries.job(c.req.valid('param').id)),
      )
      .post('/deliveries/:id/retry', operator, param(on['post /admin/deliveries/{id}/retry'].params), async (c) =>
        reply(await ops(c).deliveries.retryDelivery(c.req.valid('param').id)),
      )
      // docs/reference.md#alerts: newest first; an acknowledgement keeps who made it (actor.ts) and when, the first one.
      .get('/incidents', viewer, query(on['get /admin/incidents'].query), async (c) =>
        reply(await ops(c).incidents.list(c.req.valid('query'))),
      )
      .get('/incidents/:id', viewer, param(on['get /admin/incidents/{id}'].params), async (c) =>
        reply(await ops(c).incidents.get(c.req.valid('param').id)),
      )
      .post('/incidents/:id/ack', operator, param(on['post /admin/incidents/{id}/ack'].params), async (c) =>
        reply(await ops(c).incidents.acknowledge(c.req.valid('param').id, requestActor(c))),
      )
      // docs/reference.md#access and #erasure: a person found by any spelling of their number, or their address.
      .get('/people', viewer, query(on['get /admin/people'].query), async (c) =>
        reply(await ops(c).privacy.show(c.req.valid('query'))),
      )
      .post('/erase', adminOnly, json(on['post /admin/erase'].body), async (c) => {
        const { dry_run, ...person } = c.req.valid('json');
        return reply(await ops(c).privacy.erase(person, { dryRun: dry_run, actor: requestActor(c) }));
      })
      .get('/erasures', viewer, query(on['get /admin/erasures'].query), async (c) =>
        reply(await ops(c).privacy.check(c.req.valid('query'))),
      )
      // docs/reference.md#operators: users and their tokens, each change kept in the audit log by the operations.
      .get('/users', adminOnly, async () => reply({ users: await users.list() }))
      .post('/users', adminOnly, json(on['post /admin/users'].body), async (c) =>
        reply(await users.add(c.get('actor'), c.req.valid('json'), linkOrigin(c)), 201),
      )
      .patch(
        '/users/:email',
        adminOnly,
        param(on['patch /admin/users/{email}'].params),
        json(on['patch /admin/users/{email}'].body),
        async (c) => reply(await users.setRole(c.get('actor'), c.req.valid('param').email, c.req.valid('json').role)),
      )
      .delete('/users/:email', adminOnly, param(on['delete /admin/users/{email}'].params), async (c) => {
        await users.remove(c.get('actor'), c.req.valid('param').email);
        return c.body(null, 204);
      })
      .post('/users/:email/reset', adminOnly, param(on['post /admin/users/{email}/reset'].params), async (c) =>
        reply(await users.reset(c.get('actor'), c.req.valid('param').email, linkOrigin(c))),
      )
      .post(
        '/users/:email/tokens',
        adminOnly,
        param(on['post /admin/users/{email}/tokens'].params),
        json(on['post /admin/users/{email}/tokens'].body),
        async (c) =>
          reply(await users.addToken(c.get('actor'), c.req.valid('param').email, c.req.valid('json').name), 201),
      )
      .delete('/tokens/:id', adminOnly, param(on['delete /admin/tokens/{id}'].params), async (c) => {
        await users.revokeToken(c.get('actor'), c.req.valid('param').id);
        return c.body(null, 204);
      })
      // docs/reference.md#audit-log: newest first; a date is that day where the operator is, `to`'s day included.
      .get('/audit', adminOnly, query(on['get /admin/audit'].query), async (c) => {
        const { from, to, ...filters } = c.req.valid('query');
        const toDay = to !== undefined && DAY.test(to) ? inZone(nextDay(to)) : to;
        return reply(
          await audit.list({ ...filters, from: timeBound(inZone(from), 'from'), to: timeBound(toDay, 'to') }),
        );
      })
  );
}

function refuse(result: { success: boolean; error?: z.core.$ZodError }): void {
  if (!result.success) throw new CallhookError('BAD_REQUEST', describe(result.error!));
}

/**
 * The query, validated with the route's schema (admin-schemas.ts). A parameter given empty (`?hook=&from=`, as a
 * form leaves a field) is no filter, as if it were not given; one given twice counts as given once, its first value,
 * as `c.req.query()` reads it.
 */
function query<S extends z.ZodObject>(schema: S) {
  const validationFunction = (s: z.ZodObject, value: Record<string, string | string[]>) => {
    const given = Object.entries(value)
      .map(([name, v]) => [name, Array.isArray(v) ? v[0] : v] as const)
      .filter(([, v]) => v !== '' && v !== undefined);
    return s.safeParseAsync(Object.fromEntries(given));
  };
  // The cast: zod-validator types the option's result by a conditional type TypeScript cannot resolve for a generic S.
  return zValidator('query', schema, refuse, { validationFunction } as { validationFunction: never });
}

/** The path's parameters, validated with the route's schema. */
function param<S extends z.ZodObject>(schema: S) {
  return zValidator('param', schema, refuse);
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

/**
 * The JSON body, validated with the route's schema and handed to the route as `c.req.valid('json')`. Not
 * zValidator('json'): that reads a body only when it is labelled JSON, and a body sent without the label (curl -d
 * says form-urlencoded) would be taken as `{}`, a redelivery to named sinks as one to every sink. This reads the
 * body bodyUpTo already read under its limit, whatever its label, as the admin API always has.
 */
function json<S extends z.ZodType>(
  schema: S,
): MiddlewareHandler<AdminEnv, string, { in: { json: z.input<S> }; out: { json: z.output<S> } }> {
  return async function adminJson(c, next) {
    // As c.req.text() reads it: a byte-order mark dropped, bytes that are not UTF-8 replaced.
    const text = new TextDecoder().decode(c.get('body'));
    let body: unknown = {};
    try {
      if (text.trim() !== '') body = JSON.parse(text);
    } catch (cause) {
      throw new CallhookError('BAD_REQUEST', 'the body is not JSON', { cause });
    }
    const parsed = await schema.safeParseAsync(body);
    refuse(parsed);
    c.req.addValidatedData('json', parsed.data as object);
    await next();
  };
}

function describe(error: z.core.$ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.join('.');
  return `${path}: ${issue.code === 'unrecognized_keys' ? 'unknown parameter' : issue.message}`;
}
