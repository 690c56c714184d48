import type { MiddlewareHandler } from 'hono';
import { CallhookError } from '../errors.js';
import { createKeyRing, isKeyRing, type KeyRing } from '../keys/ring.js';
import { secretDigest, TOKEN_PREFIX } from '../operators/credentials.js';
import type { ActorEnv } from '../operators/guard.js';
import { type Actor, ADMIN_TOKEN_ACTOR } from '../operators/roles.js';
import type { OperatorStore } from '../store/operators.js';
import { bearerToken, refuseBearer } from './auth.js';
import type { AuthLimiter } from './auth-limit.js';
import { clientAddress } from './client-address.js';

/**
 * Who is asking the admin API (docs/reference.md#operators): the admin token, an admin named `admin-token`, or a
 * user's personal token (`chk_…`), that user with their role as it is now, looked up by its digest in one indexed
 * read. A revoked token, or one whose user was removed, is not found, so it is refused from the very next request,
 * on every replica. Anything else is refused as the bearer check refuses a wrong key (auth.ts), counted on the same
 * limiter; a valid token, admin or personal, is never refused by it (each is 256 random bits: it cannot be guessed).
 *
 * The request goes on with its actor set (`c.get('actor')`), which the role guards (operators/guard.ts), the audit
 * log and everything that keeps who acted read.
 */

/** docs/reference.md#operators: a token's last use is written at most once a minute. */
export const TOUCH_EVERY_MS = 60_000;

export interface AdminAuthOptions {
  /** The admin token: configured, or a ring callhook keeps and reads again while serving (keys/ring.ts). */
  adminToken: string | KeyRing;
  tokens: Pick<OperatorStore, 'findToken' | 'touchToken'>;
  limiter?: AuthLimiter;
  trustProxy?: boolean;
  now?: () => Date;
}

export function adminAuth<E extends ActorEnv>({
  adminToken,
  tokens,
  limiter,
  trustProxy = false,
  now = () => new Date(),
}: AdminAuthOptions): MiddlewareHandler<E> {
  const ring = isKeyRing(adminToken) ? adminToken : createKeyRing([adminToken]);
  const personal = async (token: string, address: string): Promise<Actor | undefined> => {
    let found: Awaited<ReturnType<typeof tokens.findToken>>;
    try {
      found = await tokens.findToken(secretDigest(token));
    } catch (cause) {
      throw new CallhookError('STORE_UNAVAILABLE', 'the token could not be checked', { cause });
    }
    if (!found) return undefined;
    const at = now();
    const last = found.token.lastUsedAt === null ? Number.NEGATIVE_INFINITY : Date.parse(found.token.lastUsedAt);
    // A use not written is only a less recent "last used": it never refuses the request.
    if (at.getTime() - last >= TOUCH_EVERY_MS)
      await tokens.touchToken(found.token.id, at.toISOString()).catch(() => {});
    return { name: found.user.email, role: found.user.role, userId: found.user.id, via: 'token', address };
  };
  return async function adminActor(c, next) {
    const token = bearerToken(c);
    const address = clientAddress(c, trustProxy);
    let actor: Actor | undefined;
    if (token !== undefined && ring.accepts(token))
      actor = { name: ADMIN_TOKEN_ACTOR, role: 'admin', via: 'admin-token', address };
    else if (token?.startsWith(TOKEN_PREFIX)) actor = await personal(token, address);
    if (!actor) return refuseBearer(c, limiter, trustProxy);
    c.set('actor', actor);
    await next();
  };
}
