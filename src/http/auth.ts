import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { CallhookError } from '../errors.js';

/**
 * hono/bearer-auth does the constant-time comparison against every accepted key and accepts the scheme in any
 * case. Its replies are replaced: the contract answers every missing, malformed or wrong key alike with 401,
 * the spec's Error object and `WWW-Authenticate: Bearer` (RFC 6750 section 3), where hono would send 400 for a
 * malformed header.
 */
export function requireBearer(keys: readonly string[], realm: string): MiddlewareHandler {
  if (keys.length === 0) throw new Error('requireBearer: requires at least one key');
  const refuse = () =>
    new Response(JSON.stringify(new CallhookError('UNAUTHORIZED').toBody()), {
      status: 401,
      headers: { 'content-type': 'application/json', 'www-authenticate': `Bearer realm="${realm}"` },
    });
  const message = { message: refuse };
  return bearerAuth({
    token: [...keys],
    realm,
    noAuthenticationHeader: message,
    invalidAuthenticationHeader: message,
    invalidToken: message,
  });
}
