import { createHash } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { CallhookError } from '../errors.js';
import type { AuthLimiter } from './auth-limit.js';

/**
 * hono/bearer-auth does the constant-time comparison against every accepted key and accepts the scheme in any
 * case. Its replies are replaced: the contract answers every missing, malformed or wrong key alike with 401,
 * the spec's Error object and `WWW-Authenticate: Bearer` (RFC 6750 section 3), where hono would send 400 for a
 * malformed header.
 */
export function requireBearer(keys: readonly string[], realm: string, limiter?: AuthLimiter): MiddlewareHandler {
  if (keys.length === 0) throw new Error('requireBearer: requires at least one key');
  const refuse = (c: Context) => {
    const address = remoteAddress(c);
    const waitMs = limiter?.retryAfterMs(address) ?? 0;
    if (waitMs > 0) return errorResponse(new CallhookError('TOO_MANY_FAILURES'), { 'retry-after': String(Math.ceil(waitMs / 1000)) });
    limiter?.fail(address);
    return errorResponse(new CallhookError('UNAUTHORIZED'), { 'www-authenticate': `Bearer realm="${realm}"` });
  };
  const message = { message: refuse };
  return bearerAuth({
    token: [...keys],
    realm,
    hashFunction: sha256,
    noAuthenticationHeader: message,
    invalidAuthenticationHeader: message,
    invalidToken: message,
  });
}

/**
 * hono hashes both sides before its constant-time compare; its default is WebCrypto's async digest, which costs a
 * thread-pool round trip per key on every request. node:crypto's synchronous hash gives the same digest.
 */
function sha256(data: string): string {
  return createHash('sha256').update(data).digest('hex');
}

function errorResponse(err: CallhookError, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(err.toBody()), { status: err.status, headers: { 'content-type': 'application/json', ...headers } });
}

/** The peer's address; behind a reverse proxy this is the proxy's, which only groups its bad clients together. */
function remoteAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // not served by @hono/node-server (app.request in tests)
  }
}
