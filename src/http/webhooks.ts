import { type Context, Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { type AlertEvents, NO_ALERTS } from '../alerts/monitor.js';
import { CallhookError } from '../errors.js';
import { runHandler } from '../in-call/handler.js';
import { type CallerHistory, callerHistory, HISTORY_CALLS } from '../in-call/history.js';
import type { Intake } from '../intake/intake.js';
import {
  type RequestHead,
  receiptOf,
  requestFields,
  SOURCE_HEADER,
  sourceOf,
  type WebhookRequest,
} from '../intake/parse/request-fields.js';
import type { Hook } from '../intake/pipeline.js';
import type { RequestOutcome } from '../intake/request.js';
import type { KeyRing } from '../keys/ring.js';
import { normalize } from '../normalize/index.js';
import type { CallStore, Receipt } from '../store/calls.js';
import { requireBearer } from './auth.js';
import type { AuthLimiter } from './auth-limit.js';
import { STORE_DEADLINE_MS, withinDeadline } from './deadline.js';
import type { AppEnv } from './env.js';
import { requestHeader, setReplyHeader } from './node-headers.js';
import { platformReceiver } from './platform-webhooks.js';
import { readBody } from './read-body.js';
import { historyOutageLog, storeOutageLog } from './store-outage.js';

/** Methods the calling service can be configured to send (spec section 6.2). */
const METHODS = ['POST', 'PUT', 'GET', 'DELETE'] as const;

export interface WebhookDeps {
  /**
   * The hooks and the way in for their calls, built once by serve (intake/intake.ts): a request goes to SQLite's
   * writer thread when there is one, and the delivery worker is woken once its call is accepted.
   */
  intake: Pick<Intake, 'hooks' | 'ingestRequest' | 'ingestFields' | 'inCallHandlers'>;
  /** The receipts of refused requests, and the caller history an in-call hook answers from. */
  store: Pick<CallStore, 'recordRejection' | 'callerHistory'>;
  log: Logger;
  bodyLimitBytes: number;
  /** Sheds repeated failed authentication (shared with the admin routes). */
  limiter?: AuthLimiter;
  /** docs/reference.md#exposure: the limiter counts the last X-Forwarded-For hop, not the peer (client-address.ts). */
  trustProxy?: boolean;
  /** How long a store write or read may take before the reply is a 503 (deadline.ts). */
  storeDeadlineMs?: number;
  /**
   * The global keys when callhook keeps them (no CALLHOOK_API_KEYS): read again while serving, so a new key works at
   * once (docs/reference.md#start-and-set-up). A hook that declares no keys of its own follows them; one that does
   * keeps its own.
   */
  globalKeys?: KeyRing;
  /** What the alert rules hear of the calls (docs/reference.md#alerts): a wrong key, a call stored, a commit failed. */
  alerts?: AlertEvents;
  /** The config's `timezone`: a platform's call date is the day its call started there. */
  timezone?: string;
}

type Env = { Variables: AppEnv['Variables'] & { hook: Hook; head: RequestHead } };

/** `/webhooks/:hook`: method → hook → key → body → normalise → commit → reply (docs/reference.md#receiving). */
export function webhookRoutes({
  intake: { hooks, ingestRequest, ingestFields, inCallHandlers },
  store,
  log,
  bodyLimitBytes,
  limiter,
  trustProxy = false,
  storeDeadlineMs = STORE_DEADLINE_MS,
  globalKeys,
  alerts = NO_ALERTS,
  timezone = Intl.DateTimeFormat().resolvedOptions().timeZone,
}: WebhookDeps): Hono<Env> {
  // A platform's hook is authenticated by its signature, checked on the body (platform-webhooks.ts).
  const auth = new Map(
    [...hooks]
      .filter(([, hook]) => !hook.config.platform)
      .map(([name, hook]) => [
        name,
        requireBearer(
          hook.config.keys.length > 0 ? hook.config.keys : (globalKeys ?? []),
          limiter,
          trustProxy,
          hook.config.kind === 'end-of-call' ? () => alerts.wrongKey(name) : undefined,
        ),
      ]),
  );

  const outage = storeOutageLog(log);
  const historyOutage = historyOutageLog(log);

  const bounded = <T>(work: Promise<T>, what: string) => withinDeadline(work, storeDeadlineMs, what);

  /**
   * Keeps a receipt of the refused request, then throws the error reply. A body that was read but could not be used is
   * kept whole, as received (docs/reference.md#receipts): it is within the body limit, which bounds it as it bounds
   * every stored call's raw body. When the store itself is what failed, the reply does not wait for it a second time.
   */
  const rejectAndThrow = async (c: Context<Env>, err: CallhookError, rawBody?: Uint8Array): Promise<never> => {
    const receipt = receiptAt(c, rawBody?.byteLength);
    // The query string is kept with the body: a refused request is ingested again as it came
    // (docs/reference.md#refused-requests).
    const query = searchOf(c.req.url);
    const kept = bounded(
      store.recordRejection({
        ...receipt,
        status: err.status,
        outcome: 'rejected',
        error: err.message,
        rawBody,
        query,
      }),
      'storing a receipt',
    ).then(outage.committed, (cause) => outage.failed(cause, { hook: receipt.hook, receipt: true }));
    if (err.code !== 'STORE_UNAVAILABLE') await kept;
    throw err;
  };

  /**
   * An in-call hook answers from the store at once and stores nothing but a receipt. Without a usable phone
   * number it still answers 200, with no history and the problems: the AI is mid-conversation and needs
   * something to say, where an error would leave it silent.
   */
  const answerInCall = async (
    c: Context<Env>,
    hook: Hook,
    fields: Record<string, unknown>,
    size: number,
  ): Promise<Response> => {
    const name = hook.config.name;
    const { data, extra, problems } = normalize(fields, hook.parameters);
    const phone = typeof data.phone_number === 'string' ? data.phone_number : null;
    let history: CallerHistory;
    try {
      const found = phone
        ? await bounded(store.callerHistory(phone, HISTORY_CALLS), 'reading the caller history')
        : undefined;
      if (found) historyOutage.read();
      history = callerHistory(phone, found?.count ?? 0, found?.records ?? [], phone ? [] : problems);
    } catch (cause) {
      historyOutage.failed(cause, name);
      return rejectAndThrow(c, new CallhookError('STORE_UNAVAILABLE', 'the caller history cannot be read', { cause }));
    }
    const handler = inCallHandlers?.get(name);
    let body = JSON.stringify(history);
    if (handler) {
      try {
        body = await runHandler(handler, { hook: name, data, extra, problems, history }, hook.config.handlerTimeoutMs);
      } catch (err) {
        if (!(err instanceof CallhookError)) throw err;
        log.warn({ err: err.cause ?? err, hook: name }, err.message);
        return rejectAndThrow(c, err);
      }
    }
    await bounded(
      store.recordRejection({ ...receiptAt(c, size), status: 200, outcome: 'in-call' }),
      'storing a receipt',
    ).then(outage.committed, (cause) => outage.failed(cause, { hook: name, receipt: true }));
    c.set('summary', { hook: name, outcome: 'in-call' });
    return c.body(body, 200, { 'content-type': 'application/json' });
  };

  const selectHook: MiddlewareHandler<Env> = async (c, next) => {
    if (!(METHODS as readonly string[]).includes(c.req.method)) {
      setReplyHeader(c, 'allow', METHODS.join(', '));
      throw new CallhookError('METHOD_NOT_ALLOWED');
    }
    const hook = hooks.get(c.req.param('hook') ?? '');
    if (!hook) throw new CallhookError('UNKNOWN_HOOK', c.req.param('hook'));
    c.set('hook', hook);
    c.set('summary', { hook: hook.config.name });
    c.set('head', {
      hook: hook.config.name,
      method: c.req.method,
      contentType: requestHeader(c, 'content-type') ?? null,
      receivedAt: new Date().toISOString(),
      source: sourceOf(requestHeader(c, SOURCE_HEADER)),
    });
    return hook.config.platform ? next() : auth.get(hook.config.name)!(c, next);
  };

  const receivePlatform = platformReceiver({
    ingestFields,
    store,
    log,
    limiter,
    trustProxy,
    timezone,
    alerts,
    bounded,
    reject: (c, err, rawBody) => rejectAndThrow(c as Context<Env>, err, rawBody),
    commitFailed: (cause, hook) => {
      outage.failed(cause, { hook });
      alerts.commitFailed();
    },
    committed: () => {
      outage.committed();
      alerts.committed();
    },
  });

  return new Hono<Env>().all('/:hook', selectHook, async (c) => {
    const hook = c.get('hook');
    if (hook.config.platform) return receivePlatform(c, hook, c.get('head'));
    const method = c.req.method;
    // GET and DELETE carry no body (spec section 6.3 rule 3); whatever came along is not read.
    const hasBody = method === 'POST' || method === 'PUT';
    let body: Uint8Array = new Uint8Array(0);
    try {
      if (hasBody) body = await readBody(c, bodyLimitBytes);
    } catch (err) {
      if (err instanceof CallhookError) return rejectAndThrow(c, err);
      throw err;
    }
    // Field by field: a spread with properties after it costs about 0.5 µs each on Node 20 (docs/performance.md).
    const head = c.get('head');
    const request: WebhookRequest = {
      hook: head.hook,
      method: head.method,
      contentType: head.contentType,
      receivedAt: head.receivedAt,
      source: head.source,
      search: searchOf(c.req.url),
      body,
    };

    if (hook.config.kind === 'in-call') {
      let fields: Record<string, unknown>;
      try {
        ({ fields } = await requestFields(request, hook.config.allow_files));
      } catch (err) {
        if (err instanceof CallhookError) return rejectAndThrow(c, err, body);
        throw err;
      }
      return answerInCall(c, hook, fields, body.byteLength);
    }

    let outcome: RequestOutcome;
    try {
      outcome = await bounded(ingestRequest(request), 'the commit');
    } catch (cause) {
      outage.failed(cause, { hook: hook.config.name });
      alerts.commitFailed();
      return rejectAndThrow(c, new CallhookError('STORE_UNAVAILABLE', undefined, { cause }));
    }
    if ('refused' in outcome)
      return rejectAndThrow(c, new CallhookError(outcome.refused.code, outcome.refused.detail), body);
    outage.committed();
    alerts.committed();
    const { reply } = outcome;
    alerts.arrived(hook.config.name, reply.status === 'duplicate' ? undefined : reply.problems.length > 0);
    c.set('summary', { hook: hook.config.name, outcome: reply.status, callId: reply.id });
    return c.json(reply, 200);
  });
}

/** The receipt of the request under way; before its body is read, its size is what the client declared. */
function receiptAt(
  c: Context<Env>,
  size = Number(requestHeader(c, 'content-length') ?? 0),
): Omit<Receipt, 'status' | 'outcome'> {
  return receiptOf(c.get('head'), Number.isFinite(size) ? size : 0);
}

/** The query string with its `?`, as URL gives it; most calls carry none, and need no URL parsed. */
function searchOf(url: string): string {
  return url.includes('?') ? new URL(url).search : '';
}
