import type { KeyRing } from '../keys/ring.js';
import { newSecret, secretDigest } from '../operators/credentials.js';
import type { OperatorStore, UserRecord } from '../store/operators.js';

/**
 * The dashboard's sign-in sessions (docs/reference.md#dashboard), kept in the store: the cookie holds 32 random bytes,
 * the store their digest, with the user (or, for a session begun with the admin token, the digest of that token).
 * Every /ui request looks its session up, so whatever ends one (a sign-out, a removed user, a changed role or a reset
 * password, which the store ends in the same transaction; a rotated admin token, whose digest is no longer in the
 * ring) ends it on every replica at the next request.
 */

/** docs/reference.md#dashboard: a session ends 12 hours after sign-in, whatever the cookie says. */
export const SESSION_MS = 12 * 60 * 60 * 1000;
export const SESSION_COOKIE = 'callhook_session';

/** Who a live session is: a user as they are now, or the admin token. */
export type SessionHolder = { user: UserRecord } | { adminToken: true };

export interface Sessions {
  /** A new session for a user, or for the admin token given (one the ring accepts): its cookie value. */
  begin(holder: { user: UserRecord } | { adminToken: string }): Promise<{ value: string; maxAgeSeconds: number }>;
  /** Who the cookie value's session is, when it is live. */
  find(value: string | undefined): Promise<SessionHolder | undefined>;
  /** Ends the cookie value's session, if it is one. */
  end(value: string | undefined): Promise<void>;
}

/** What a cookie value looks like: 32 bytes, base64url. Anything else is no session, without asking the store. */
const VALUE = /^[A-Za-z0-9_-]{43}$/;

export function createSessions({
  store,
  ring,
  now = Date.now,
}: {
  store: Pick<OperatorStore, 'addSession' | 'findSession' | 'endSession'>;
  /** The admin tokens accepted now (keys/ring.ts): read at each check, as the ring changes while serving. */
  ring: KeyRing;
  now?: () => number;
}): Sessions {
  // A token's digest, computed once per token the ring ever held.
  const digests = new Map<string, string>();
  const digestOf = (token: string) => {
    let digest = digests.get(token);
    if (digest === undefined) digests.set(token, (digest = secretDigest(token)));
    return digest;
  };

  return {
    async begin(holder) {
      const { secret, digest } = newSecret();
      const at = now();
      await store.addSession({
        digest,
        userId: 'user' in holder ? holder.user.id : null,
        keyDigest: 'adminToken' in holder ? secretDigest(holder.adminToken) : null,
        at: new Date(at).toISOString(),
        expiresAt: new Date(at + SESSION_MS).toISOString(),
      });
      return { value: secret, maxAgeSeconds: SESSION_MS / 1000 };
    },
    async find(value) {
      if (value === undefined || !VALUE.test(value)) return undefined;
      const session = await store.findSession(secretDigest(value), new Date(now()).toISOString());
      if (!session) return undefined;
      if (session.user) return { user: session.user };
      // An admin-token session lives while the token it began with is accepted (docs/reference.md#dashboard: a
      // rotated token ends the sessions it began).
      const key = session.keyDigest;
      return key !== null && ring.keys.some((token) => digestOf(token) === key) ? { adminToken: true } : undefined;
    },
    async end(value) {
      if (value !== undefined && VALUE.test(value)) await store.endSession(secretDigest(value));
    },
  };
}
