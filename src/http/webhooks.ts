import { Hono, type Context, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import { CallhookError } from '../errors.js';
import type { Hook, IntakeInput, IntakeReply } from '../intake.js';
import type { Receipt, Store } from '../store/store.js';
import type { AppEnv } from './env.js';
import type { AuthLimiter } from './auth-limit.js';
import { requireBearer } from './auth.js';
import { parseBody } from './parse-body.js';
import { parseQuery } from './parse-query.js';
import { readBody } from './read-body.js';

/** Methods the calling service can be configured to send (spec section 6.2). */
const METHODS = ['POST', 'PUT', 'GET', 'DELETE'] as const;
/** For `raw`: the body parsed, so it is UTF-8, except the bytes of an allowed file part. */
const lenientUtf8 = new TextDecoder();
/** How much of an unparseable body a rejected receipt keeps, so a bad sender cannot fill the disk. */
const REJECTED_BODY_BYTES = 64 * 1024;

export interface WebhookDeps {
  hooks: ReadonlyMap<string, Hook>;
  ingest: (input: IntakeInput) => Promise<IntakeReply>;
  store: Store;
  log: Logger;
  bodyLimitBytes: number;
  /** Sheds repeated failed authentication (shared with the admin routes). */
  limiter?: AuthLimiter;
}

type Env = { Variables: AppEnv['Variables'] & { hook: Hook; receivedAt: Date } };

/** `/webhooks/:hook`: method → hook → key → body → normalise → commit → reply (contract section 2). */
export function webhookRoutes({ hooks, ingest, store, log, bodyLimitBytes, limiter }: WebhookDeps): Hono<Env> {
  const auth = new Map([...hooks].map(([name, hook]) => [name, requireBearer(hook.config.keys, name, limiter)]));

  const rejectAndThrow = async (c: Context<Env>, err: CallhookError, rawBody?: Uint8Array): Promise<never> => {
    await store
      .recordRejection({ ...receiptOf(c, rawBody?.byteLength), status: err.status, outcome: 'rejected', error: err.message, rawBody: rawBody?.subarray(0, REJECTED_BODY_BYTES) })
      .catch((cause) => log.error({ err: cause }, 'cannot store a rejected receipt'));
    throw err;
  };

  const selectHook: MiddlewareHandler<Env> = async (c, next) => {
    if (!(METHODS as readonly string[]).includes(c.req.method)) {
      c.header('Allow', METHODS.join(', '));
      throw new CallhookError('METHOD_NOT_ALLOWED');
    }
    const hook = hooks.get(c.req.param('hook') ?? '');
    if (!hook) throw new CallhookError('UNKNOWN_HOOK', c.req.param('hook'));
    c.set('hook', hook);
    c.set('summary', { hook: hook.config.name });
    c.set('receivedAt', new Date());
    return auth.get(hook.config.name)!(c, next);
  };

  return new Hono<Env>().all('/:hook', selectHook, async (c) => {
    const hook = c.get('hook');
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
    const contentType = c.req.header('content-type') ?? null;

    let fields: Record<string, unknown>;
    let query: Record<string, string | string[]>;
    try {
      query = parseQuery(new URL(c.req.url).search);
      const parsed = await parseBody(body, contentType ?? undefined, { allowFiles: hook.config.allow_files });
      // Query parameters fill only what the body does not carry; both stay in `raw`.
      fields = { ...query, ...parsed.fields };
    } catch (err) {
      if (err instanceof CallhookError) return rejectAndThrow(c, err, body);
      throw err;
    }

    let reply: IntakeReply;
    try {
      reply = await ingest({
        hook,
        fields,
        raw: { method, content_type: contentType, query, body: lenientUtf8.decode(body) },
        source: 'webhook',
        receipt: receiptOf(c, body.byteLength),
        receivedAt: c.get('receivedAt'),
      });
    } catch (cause) {
      log.error({ err: cause, hook: hook.config.name }, 'cannot commit a call');
      return rejectAndThrow(c, new CallhookError('STORE_UNAVAILABLE', undefined, { cause }));
    }
    c.set('summary', { hook: hook.config.name, outcome: reply.status, callId: reply.id });
    return c.json(reply, 200);
  });
}

function receiptOf(c: Context<Env>, size = Number(c.req.header('content-length') ?? 0)): Omit<Receipt, 'status' | 'outcome'> {
  return {
    hook: c.get('hook').config.name,
    receivedAt: c.get('receivedAt').toISOString(),
    method: c.req.method,
    contentType: c.req.header('content-type') ?? null,
    size: Number.isFinite(size) ? size : 0,
  };
}
