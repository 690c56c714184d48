import { createHash, timingSafeEqual } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { CallhookError } from '../errors.js';
import type { AuthLimiter } from './auth-limit.js';

/**
 * hono/bearer-auth reads the header and accepts the scheme in any case; the token is compared in constant time
 * against every accepted key, each as its SHA-256 digest. Its replies are replaced: the contract answers every
 * missing, malformed or wrong key alike with 401, the spec's Error object and `WWW-Authenticate: Bearer` (RFC 6750
 * section 3), where hono would send 400 for a malformed header.
 */
export function requireBearer(keys: readonly string[], limiter?: AuthLimiter): MiddlewareHandler {
  if (keys.length === 0) throw new Error('requireBearer: requires at least one key');
  const refuse = (c: Context) => {
    const address = remoteAddress(c);
    const waitMs = limiter?.retryAfterMs(address) ?? 0;
    if (waitMs > 0) return errorResponse(new CallhookError('TOO_MANY_FAILURES'), { 'retry-after': String(Math.ceil(waitMs / 1000)) });
    limiter?.fail(address);
    // Exactly the contract's challenge: a realm is optional (RFC 6750 section 3) and would only name the route.
    return errorResponse(new CallhookError('UNAUTHORIZED'), { 'www-authenticate': 'Bearer' });
  };
  const message = { message: refuse };
  const digests = keys.map(sha256);
  return bearerAuth({
    // The keys are hashed once here; a request hashes its token once, whatever the number of keys.
    verifyToken: (token) => {
      const digest = sha256(token);
      let equal = false;
      for (const key of digests) equal = timingSafeEqual(key, digest) || equal;
      return equal;
    },
    noAuthenticationHeader: message,
    invalidAuthenticationHeader: message,
    invalidToken: message,
  });
}

/** Digests of one length, so the constant-time compare never depends on the length of what was sent. */
function sha256(data: string): Buffer {
  return createHash('sha256').update(data).digest();
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
