import type { Context, MiddlewareHandler } from 'hono';
import { CallhookError } from '../errors.js';
import { createKeyRing, isKeyRing, type KeyRing } from '../keys/ring.js';
import type { AuthLimiter } from './auth-limit.js';
import { clientAddress } from './client-address.js';
import { requestHeader } from './node-headers.js';

/** RFC 6750 section 2.1: `Bearer`, in any case (RFC 9110 section 11.1), one or more spaces, then a b64token. */
const BEARER = /^bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/**
 * The bearer check of docs/reference.md#receiving: the scheme in any case, the token compared in constant time against
 * every accepted key, each as its SHA-256 digest. Every missing, malformed or wrong key is answered alike, 401 with the
 * spec's Error object and `WWW-Authenticate: Bearer` (RFC 6750 section 3).
 *
 * hono/bearer-auth does the same check, but reads the header through the request's web Headers, which
 * @hono/node-server builds from scratch for it on every request (node-headers.ts); it also answers a malformed
 * header with 400 where docs/reference.md#replies wants 401.
 *
 * Failures count against the client's address, the last X-Forwarded-For hop when `trustProxy`
 * (docs/reference.md#exposure), else the peer's.
 */
export function requireBearer(
  keys: readonly string[] | KeyRing,
  limiter?: AuthLimiter,
  trustProxy = false,
  /** Told of each request refused for its key (the alerts' auth_failures, docs/reference.md#alerts). */
  onRefused?: () => void,
): MiddlewareHandler {
  if (!isKeyRing(keys) && keys.length === 0) throw new Error('requireBearer: requires at least one key');
  // A ring holds the keys hashed (keys/ring.ts); kept keys come as a ring that changes while serving
  // (docs/reference.md#start-and-set-up), and are looked up per request, from memory.
  const ring = isKeyRing(keys) ? keys : createKeyRing(keys);
  const refuse = (c: Context) => {
    onRefused?.();
    return refuseBearer(c, limiter, trustProxy);
  };
  return async function bearer(c, next) {
    const token = bearerToken(c);
    if (token === undefined || !ring.accepts(token)) return refuse(c);
    await next();
  };
}

/** The request's bearer token, or undefined when its Authorization header holds none. */
export function bearerToken(c: Context): string | undefined {
  return BEARER.exec(requestHeader(c, 'authorization') ?? '')?.[1];
}

/**
 * The answer to a missing, malformed or wrong key: 401 with the challenge, counted on the limiter against the client's
 * address; 429 with Retry-After while that address is over the limit.
 */
export function refuseBearer(c: Context, limiter: AuthLimiter | undefined, trustProxy: boolean): Response {
  const address = clientAddress(c, trustProxy);
  const waitMs = limiter?.retryAfterMs(address) ?? 0;
  if (waitMs > 0)
    return errorResponse(new CallhookError('TOO_MANY_FAILURES'), { 'retry-after': String(Math.ceil(waitMs / 1000)) });
  limiter?.fail(address);
  // Exactly the documented challenge (docs/reference.md#replies): a realm is optional (RFC 6750 section 3) and would
  // only name the route.
  return errorResponse(new CallhookError('UNAUTHORIZED'), { 'www-authenticate': 'Bearer' });
}

function errorResponse(err: CallhookError, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(err.toBody()), {
    status: err.status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
