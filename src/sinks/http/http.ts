import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { sendRequest } from '../shared/http-response.js';
import { defineSinkType } from '../sink.js';

/**
 * Standard Webhooks (https://www.standardwebhooks.com, "Signature scheme"): a symmetric secret is `whsec_` and the
 * base64 of at least 24 random bytes (192 bits), at most 64 (512 bits).
 */
const SIGNING_SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;

/** Set per attempt by callhook; a configured value would break deduplication or the signature. */
const RESERVED_HEADERS = new Set([
  'idempotency-key',
  'x-callhook-attempt',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

export const signingSecret = z.string().refine((secret) => secretBytes(secret) !== undefined, {
  // Never echo the value: it is a secret.
  error: `signing.secret must be "whsec_" followed by the base64 of ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} random bytes (Standard Webhooks)`,
});

export const headers = z.record(z.string(), z.string()).superRefine((value, ctx) => {
  for (const [name, headerValue] of Object.entries(value)) {
    const problem = RESERVED_HEADERS.has(name.toLowerCase())
      ? 'is set by callhook on every attempt'
      : headerProblem(name, headerValue);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: `header ${name} ${problem}` });
  }
});

/**
 * POSTs each record as JSON to a URL the user owns. Receivers drop repeats by `Idempotency-Key`
 * (docs/reference.md#sinks-and-delivery: delivery is at least once) and may check a Standard Webhooks signature over
 * the exact body sent.
 */
export const httpSink = defineSinkType({
  type: 'http',
  secretOptions: ['signing.secret'],
  options: z
    .strictObject({
      url: z.url({ protocol: /^https?$/, error: 'url must be an absolute http:// or https:// URL' }),
      method: z.enum(['POST', 'PUT', 'PATCH'], { error: 'method must be POST, PUT or PATCH' }).default('POST'),
      headers: headers.default({}),
      signing: z.strictObject({ secret: signingSecret }).optional(),
    })
    .superRefine(oneAuthorization),
  open({ url: configuredUrl, method, headers: configured, signing }) {
    const key = signing ? secretBytes(signing.secret) : undefined;
    const { url, authorization } = basicFromUserInfo(configuredUrl);
    return {
      async deliver(record, { attempt, idempotencyKey, signal }) {
        // Serialised once: the signature covers these exact bytes (Standard Webhooks, "Signature scheme").
        const body = JSON.stringify(record);
        const sent = new Headers(configured);
        if (authorization) sent.set('authorization', authorization);
        if (!sent.has('user-agent')) sent.set('user-agent', 'callhook');
        sent.set('content-type', 'application/json');
        sent.set('idempotency-key', idempotencyKey);
        sent.set('x-callhook-attempt', String(attempt));
        if (key) setSignature(sent, key, idempotencyKey, body);
        const response = await sendRequest(url, { method, headers: sent, body }, { signal });
        // Nothing in a 2xx body matters; cancelling frees the connection for the next delivery.
        await response.body?.cancel();
      },
    };
  },
});

/** Credentials in the URL's user info and an Authorization header as well: one would silently win. */
export function oneAuthorization(
  { url, headers: configured }: { url: string; headers: Record<string, string> },
  ctx: z.RefinementCtx,
): void {
  const withUser = URL.canParse(url) && new URL(url).username !== '';
  if (withUser && Object.keys(configured).some((name) => name.toLowerCase() === 'authorization')) {
    ctx.addIssue({
      code: 'custom',
      path: ['url'],
      message: 'url carries user:password and headers an Authorization too; keep one of them',
    });
  }
}

/**
 * Standard Webhooks' three headers over the exact `body` sent. The timestamp is the attempt's, not the call's, so a
 * receiver can refuse replays of old attempts.
 */
export function setSignature(headers: Headers, key: Buffer, id: string, body: string): void {
  const timestamp = Math.floor(Date.now() / 1000);
  headers.set('webhook-id', id);
  headers.set('webhook-timestamp', String(timestamp));
  headers.set('webhook-signature', sign(key, id, timestamp, body));
}

/**
 * `https://user:password@host/…` as curl reads it: the user info sent as `Authorization: Basic` (RFC 7617), the URL
 * without it, since fetch refuses a URL that holds credentials (Fetch standard, "Request" constructor, step 7.2).
 */
export function basicFromUserInfo(text: string): { url: string; authorization?: string } {
  const url = new URL(text);
  if (url.username === '' && url.password === '') return { url: text };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/** `v1,` + base64(HMAC-SHA256(secret, `${id}.${timestamp}.${body}`)), the symmetric scheme of Standard Webhooks. */
export function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The key bytes of a `whsec_` secret, or undefined when it is not one. */
export function secretBytes(secret: string): Buffer | undefined {
  const match = SIGNING_SECRET.exec(secret);
  if (!match?.[1]) return undefined;
  const bytes = Buffer.from(match[1], 'base64');
  return bytes.length >= MIN_SECRET_BYTES && bytes.length <= MAX_SECRET_BYTES ? bytes : undefined;
}

/** What `Headers` would refuse on every attempt (RFC 9110 section 5.1 token names, no CR/LF in values). */
function headerProblem(name: string, value: string): string | undefined {
  try {
    new Headers([[name, value]]);
    return undefined;
  } catch {
    return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)
      ? 'has a value that cannot be sent (a line break or NUL?)'
      : 'is not a valid header name';
  }
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default httpSink;
