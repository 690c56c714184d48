import { type Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import type { AuthLimiter } from '../http/auth-limit.js';
import { clientAddress } from '../http/client-address.js';
import type { KeyRing } from '../keys/ring.js';
import type { AuditLog } from '../operators/audit.js';
import { hashPassword, verifyPassword } from '../operators/credentials.js';
import { ADMIN_TOKEN_ACTOR } from '../operators/roles.js';
import type { OperatorStore, UserRecord } from '../store/operators.js';
import type { WebEnv } from './context.js';
import { Login } from './pages/login.js';
import { pastedToken } from './pasted-token.js';
import { SESSION_COOKIE, type Sessions } from './session.js';

/**
 * `GET` and `POST /ui/login` (docs/reference.md#dashboard): a person signs in with their email and password, or with
 * the admin token, both through the one page. A wrong password or token is counted by the auth limiter, as the bearer
 * checks count a wrong key; while the address is over the limit every password is refused with 429, the right one
 * too (a password can be guessed; a random token cannot, which is why a valid admin token is never refused). Every
 * sign-in and every refused one is kept in the audit log; of the refusals for the limit only the first of a window,
 * so a flood cannot fill the log.
 */

/** What looks enough like an address to name a failed sign-in in the audit log (docs/reference.md#operators). */
const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Addresses whose refusal for the limit is kept already, at most this many (the limiter's own capacity). */
const NOTED_CAPACITY = 10_000;

export function signIn({
  sessions,
  operators,
  ring,
  limiter,
  audit,
  trustProxy,
  cookie,
  now = Date.now,
}: {
  sessions: Sessions;
  operators: Pick<OperatorStore, 'findUser'>;
  ring: KeyRing;
  limiter: AuthLimiter;
  audit: AuditLog;
  trustProxy: boolean;
  /** The session cookie's flags for this request (docs/reference.md#dashboard). */
  cookie: (c: Context) => CookieOptions;
  now?: () => number;
}): Hono<WebEnv> {
  // A password given for an address nobody has is still checked, against a hash of nothing, so the time a refusal
  // takes does not say whether the address is a user's.
  let decoy: Promise<string> | undefined;
  const noUser = () => (decoy ??= hashPassword('no such user, nothing to match'));
  /** Address → when its refusal for the limit may be kept again. */
  const noted = new Map<string, number>();

  const page = (c: Context<WebEnv>, status: 200 | 401 | 429, props: Parameters<typeof Login>[0] = {}) => {
    c.status(status);
    return c.render(<Login {...props} />, { title: 'Sign in' });
  };
  const begin = async (c: Context<WebEnv>, holder: { user: UserRecord } | { adminToken: string }) => {
    const { value, maxAgeSeconds } = await sessions.begin(holder);
    setCookie(c, SESSION_COOKIE, value, { ...cookie(c), maxAge: maxAgeSeconds });
    return c.redirect('/ui', 303);
  };
  /** 429 while the address is over the limit; kept in the audit log once a window. */
  const limited = async (c: Context<WebEnv>, name: string, address: string, waitMs: number, email?: string) => {
    const t = now();
    if ((noted.get(address) ?? 0) <= t) {
      for (const [key, until] of noted) if (until <= t) noted.delete(key);
      if (noted.size >= NOTED_CAPACITY) noted.delete(noted.keys().next().value!);
      noted.set(address, t + waitMs);
      await audit.record({ name, address }, 'sign-in', null, 'TOO_MANY_FAILURES');
    }
    c.header('retry-after', String(Math.ceil(waitMs / 1000)));
    return page(c, 429, {
      email,
      error: 'Too many failed sign-ins from this address: wait a minute and try again.',
    });
  };

  return new Hono<WebEnv>()
    .get('/login', async (c) => {
      if (await sessions.find(getCookie(c, SESSION_COOKIE))) return c.redirect('/ui', 303);
      const set = c.req.query('password') === 'set';
      return page(c, 200, set ? { done: 'Your password is set: sign in with it.' } : {});
    })
    .post('/login', async (c) => {
      const form = await c.req.parseBody();
      const address = clientAddress(c, trustProxy);
      if (typeof form.token === 'string') {
        // Pasted however it was copied: bare, after `Bearer `, or as the line serve prints (pasted-token.ts).
        const token = pastedToken(form.token);
        if (ring.accepts(token)) {
          await audit.record({ name: ADMIN_TOKEN_ACTOR, address }, 'sign-in', null, 'ok');
          return begin(c, { adminToken: token });
        }
        const waitMs = limiter.retryAfterMs(address);
        if (waitMs > 0) return limited(c, ADMIN_TOKEN_ACTOR, address, waitMs);
        limiter.fail(address);
        await audit.record({ name: ADMIN_TOKEN_ACTOR, address }, 'sign-in', null, 'UNAUTHORIZED');
        return page(c, 401, { tokenError: 'That is not the admin token.' });
      }

      const email = typeof form.email === 'string' ? form.email.trim().toLowerCase() : '';
      const password = typeof form.password === 'string' ? form.password : '';
      // The address given names the attempt; text that is no address (a password typed in the wrong field) does not.
      const name = ADDRESS.test(email) && email.length <= 254 ? email : '(not an address)';
      const shownEmail = email.slice(0, 254);
      const waitMs = limiter.retryAfterMs(address);
      if (waitMs > 0) return limited(c, name, address, waitMs, shownEmail);
      const user = name === email ? await operators.findUser(email) : undefined;
      const matches = await verifyPassword(password, user?.passwordHash ?? (await noUser()));
      if (user && user.passwordHash !== null && matches) {
        const { passwordHash: _, ...record } = user;
        await audit.record({ name: user.email, address }, 'sign-in', null, 'ok');
        return begin(c, { user: record });
      }
      limiter.fail(address);
      await audit.record({ name, address }, 'sign-in', null, 'UNAUTHORIZED');
      return page(c, 401, { email: shownEmail, error: 'That email and password do not match a user.' });
    });
}
