import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createKeyRing, isKeyRing, type KeyRing } from '../keys/ring.js';

/**
 * The dashboard's sign-in session (docs/reference.md#dashboard), kept without a store table: the cookie carries a
 * random session id and the time the session ends, signed with an HMAC key derived from the admin token. So every
 * replica that shares the token accepts a session any of them began, a rotated token ends every session at once (the
 * old token's key signs nothing the new ring checks), and the cookie never holds the token itself.
 *
 * A logout is kept in memory, by session id, until that session would have ended anyway: with several replicas a
 * signed-out cookie is refused by the replica that signed it out and, until its 12 hours are up, still accepted by
 * the others (README, Dashboard). The cookie is HttpOnly and the browser drops it at logout, so only a copy taken
 * before then could be replayed.
 */

/** docs/reference.md#dashboard: a session ends 12 hours after sign-in, whatever the cookie says. */
export const SESSION_MS = 12 * 60 * 60 * 1000;
export const SESSION_COOKIE = 'callhook_session';

export interface Sessions {
  /** A new session's cookie value, signed with the newest admin token. */
  begin(): { value: string; maxAgeSeconds: number };
  /** Whether a cookie value is a live session: signed by an accepted token, not past its end, not signed out. */
  valid(value: string | undefined): boolean;
  /** Ends the session of this cookie value, if it is one. */
  end(value: string | undefined): void;
}

export interface SessionOptions {
  now?: () => number;
}

/** The HMAC key a token signs sessions with: derived, so the token's own bytes key nothing else. */
const sessionKey = (token: string) => createHmac('sha256', token).update('callhook dashboard session v1').digest();

export function createSessions(adminToken: string | KeyRing, { now = Date.now }: SessionOptions = {}): Sessions {
  // The ring of kept keys changes while serving (keys/ring.ts): the tokens are read at each check, not copied.
  const ring = isKeyRing(adminToken) ? adminToken : createKeyRing([adminToken]);
  const keys = new Map<string, Buffer>();
  const keyOf = (token: string) => {
    let key = keys.get(token);
    if (!key) keys.set(token, (key = sessionKey(token)));
    return key;
  };
  const signedOut = new Map<string, number>();

  const sign = (token: string, payload: string) =>
    createHmac('sha256', keyOf(token)).update(payload).digest('base64url');

  /** The session id and end of a well-signed value, or undefined. */
  const read = (value: string | undefined): { id: string; ends: number } | undefined => {
    const match = /^([A-Za-z0-9_-]{22})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
    if (!match) return undefined;
    const [, id, endsText, mac] = match as unknown as [string, string, string, string];
    const payload = `${id}.${endsText}`;
    const given = Buffer.from(mac, 'base64url');
    // Every accepted token is tried, whichever matches, as the bearer check compares every key.
    let good = false;
    for (const token of ring.keys)
      good = timingSafeEqual(Buffer.from(sign(token, payload), 'base64url'), given) || good;
    return good ? { id, ends: Number(endsText) } : undefined;
  };

  const forgetEnded = () => {
    const t = now();
    for (const [id, ends] of signedOut) if (ends <= t) signedOut.delete(id);
  };

  return {
    begin() {
      const id = randomBytes(16).toString('base64url');
      const ends = now() + SESSION_MS;
      return { value: `${id}.${ends}.${sign(ring.keys[0]!, `${id}.${ends}`)}`, maxAgeSeconds: SESSION_MS / 1000 };
    },
    valid(value) {
      const session = read(value);
      // The end is signed, so a cookie kept past its Max-Age, or one whose lifetime a client stretched, ends on time.
      return (
        session !== undefined &&
        now() < session.ends &&
        session.ends <= now() + SESSION_MS &&
        !signedOut.has(session.id)
      );
    },
    end(value) {
      const session = read(value);
      if (!session) return;
      forgetEnded();
      signedOut.set(session.id, session.ends);
    },
  };
}
