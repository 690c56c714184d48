import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { AlertEvents } from '../alerts/monitor.js';
import { CallhookError } from '../errors.js';
import type { RequestHead } from '../intake/parse/request-fields.js';
import type { Hook, IngestFields, IntakeReply } from '../intake/pipeline.js';
import { platformOf } from '../platforms/index.js';
import type { RawRequest } from '../record.js';
import type { CallStore } from '../store/calls.js';
import type { AuthLimiter } from './auth-limit.js';
import { clientAddress } from './client-address.js';
import { requestHeader } from './node-headers.js';
import { readBody } from './read-body.js';

/**
 * A hook a voice platform sends to (docs/reference.md#other-voice-platforms): its signature is checked on the raw
 * bytes before anything is parsed (a missing, wrong or stale one is 401 and nothing is kept); its end-of-call event is
 * read into the same record as the calling service's, by the platform's mapping, and committed through the one intake;
 * any other event is answered `ignored`, with a receipt and no body. A platform's retry of a call is a duplicate.
 */

export interface PlatformRouteDeps {
  ingestFields: IngestFields;
  store: Pick<CallStore, 'recordRejection'>;
  log: Logger;
  limiter?: AuthLimiter;
  trustProxy: boolean;
  timezone: string;
  alerts: AlertEvents;
  /** Runs a store write within the deadline (http/deadline.ts). */
  bounded: <T>(work: Promise<T>, what: string) => Promise<T>;
  /** Keeps a refused request's receipt, then throws its reply (webhooks.ts). */
  reject: (c: Context, err: CallhookError, rawBody?: Uint8Array) => Promise<never>;
  /** A commit failed: the store outage's log and alert. */
  commitFailed: (cause: unknown, hook: string) => void;
  committed: () => void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

export function platformReceiver(deps: PlatformRouteDeps) {
  const { ingestFields, store, log, limiter, trustProxy, timezone, alerts, bounded, reject } = deps;

  /** Throws the 401 (or the limiter's 429) of a request that is not the platform's. */
  const refuse = (c: Context, hook: string, why: string): never => {
    const address = clientAddress(c, trustProxy);
    const waitMs = limiter?.retryAfterMs(address) ?? 0;
    alerts.wrongKey(hook);
    if (waitMs > 0) throw new CallhookError('TOO_MANY_FAILURES');
    limiter?.fail(address);
    log.warn({ hook, why }, 'refused a platform request: its signature is not the platform’s');
    throw new CallhookError('BAD_SIGNATURE', why);
  };

  return async function receive(c: Context, hook: Hook, head: RequestHead): Promise<Response> {
    const spec = hook.config.platform!;
    const platform = platformOf(spec.name)!;
    const name = hook.config.name;
    // Before the signature is checked nothing is kept: a request that is not the platform's leaves no receipt.
    const body = await readBody(c, spec.bodyLimitBytes);
    const why = platform.verify(
      { header: (h) => requestHeader(c, h.toLowerCase()), body },
      spec.secret,
      spec.options,
      Date.now(),
    );
    if (why !== undefined) refuse(c, name, why);

    const ignore = async (event: string) => {
      log.debug({ hook: name, event }, 'a platform event that is not a call: ignored');
      await bounded(
        store.recordRejection({ ...receiptOf(head, body.byteLength), status: 200, outcome: 'ignored' }),
        'storing a receipt',
      ).then(deps.committed, (cause) => deps.commitFailed(cause, name));
      c.set('summary', { hook: name, outcome: 'ignored' });
      return c.json({ status: 'ignored' }, 200);
    };
    // An event not worth parsing (ElevenLabs' audio, megabytes of it): answered at once, its body not kept.
    const skipped = platform.skipsBody?.(body);
    if (skipped !== undefined) return ignore(skipped);

    let payload: unknown;
    try {
      payload = JSON.parse(utf8.decode(body));
    } catch {
      return reject(c, new CallhookError('BAD_BODY', `a ${spec.name} event is JSON`), body);
    }
    const event = platform.read(payload, { timezone });
    if (event.kind === 'ignored') return ignore(event.event);

    const drop = new Set(spec.drop);
    const dropped = drop.size > 0 ? withoutFields(payload, drop) : payload;
    const text = dropped === payload ? utf8.decode(body) : JSON.stringify(dropped);
    const raw: RawRequest = { method: head.method, content_type: head.contentType, query: {}, body: text };
    let reply: IntakeReply;
    try {
      reply = await bounded(
        ingestFields({
          hook,
          fields: withoutFields(event.fields, drop) as Record<string, unknown>,
          raw,
          source: head.source,
          receipt: { ...receiptOf(head, body.byteLength), rawBody: encoder.encode(text), query: '' },
          receivedAt: new Date(head.receivedAt),
          platform: { name: spec.name, rest: withoutFields(event.rest, drop) as Record<string, unknown> },
        }),
        'the commit',
      );
    } catch (cause) {
      deps.commitFailed(cause, name);
      return reject(c, new CallhookError('STORE_UNAVAILABLE', undefined, { cause }));
    }
    deps.committed();
    alerts.arrived(name, reply.status === 'duplicate' ? undefined : reply.problems.length > 0);
    c.set('summary', { hook: name, outcome: reply.status, callId: reply.id });
    return c.json(reply, 200);
  };
}

function receiptOf({ hook, receivedAt, method, contentType, source }: RequestHead, size: number) {
  return { hook, receivedAt, method, contentType, size, source };
}

/** The value without the named fields, at any depth: `drop: [transcript]` takes every transcript out. */
export function withoutFields(value: unknown, names: ReadonlySet<string>): unknown {
  if (names.size === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => withoutFields(item, names));
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !names.has(key))
      .map(([key, item]) => [key, withoutFields(item, names)]),
  );
}
