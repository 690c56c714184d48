import { type Context, Hono } from 'hono';
import { clientAddress } from '../../http/client-address.js';
import type { AuditLog } from '../../operators/audit.js';
import { hashPassword, passwordProblem, secretDigest } from '../../operators/credentials.js';
import type { LinkOutcome, OperatorStore } from '../../store/operators.js';
import { Note } from '../components.js';
import type { WebEnv } from '../context.js';

/**
 * `/ui/password/<secret>`: the one-time link an admin gives a new user, or one whose password was reset
 * (docs/reference.md#operators). It opens a form for a new password, twice; the password is set, the link used up and
 * nobody signed in: the person signs in with it next, on the sign-in page. A link used already (on any replica),
 * expired or unknown says so, and what to ask the admin for. The secret is the path: the request log writes the path
 * as `/ui/password/…` (dashboard.tsx loggedPath), and nothing here logs it.
 */
export function passwordPage({
  operators,
  audit,
  trustProxy,
  now = () => new Date(),
}: {
  operators: Pick<OperatorStore, 'checkPasswordLink' | 'usePasswordLink'>;
  audit: AuditLog;
  trustProxy: boolean;
  now?: () => Date;
}): Hono<WebEnv> {
  const gone = (c: Context<WebEnv>, outcome: Exclude<LinkOutcome, 'set'>) => {
    c.status(outcome === 'missing' ? 404 : 410);
    return c.render(<LinkGone outcome={outcome} />, { title: 'Link not usable' });
  };
  const form = (c: Context<WebEnv>, email: string, status: 200 | 400 = 200, error?: string) => {
    c.status(status);
    return c.render(<SetPassword email={email} action={c.req.path} error={error} />, { title: 'Set your password' });
  };

  return new Hono<WebEnv>()
    .get('/:secret', async (c) => {
      const found = await operators.checkPasswordLink(secretDigest(c.req.param('secret')), now().toISOString());
      return 'user' in found ? form(c, found.user.email) : gone(c, found.outcome);
    })
    .post('/:secret', async (c) => {
      const digest = secretDigest(c.req.param('secret'));
      const found = await operators.checkPasswordLink(digest, now().toISOString());
      if (!('user' in found)) return gone(c, found.outcome);
      const body = await c.req.parseBody();
      const password = typeof body.password === 'string' ? body.password : '';
      const again = typeof body.again === 'string' ? body.again : '';
      const problem = passwordProblem(password) ?? (password !== again ? 'the two passwords differ' : undefined);
      if (problem) return form(c, found.user.email, 400, `Not set: ${problem}.`);
      // Checked again as it is used, in one transaction: of two uses at once, on any replicas, one sets it.
      const used = await operators.usePasswordLink(digest, await hashPassword(password), now().toISOString());
      if (used.outcome !== 'set') return gone(c, used.outcome);
      const email = used.user?.email ?? found.user.email;
      await audit.record({ name: email, address: clientAddress(c, trustProxy) }, 'user.password', email, 'ok');
      return c.redirect('/ui/login?password=set', 303);
    });
}

function SetPassword({ email, action, error }: { email: string; action: string; error?: string }) {
  return (
    <div class="login card">
      <h1>Set your password</h1>
      <p>
        For <strong>{email}</strong>. At least 12 characters; a few words you will remember are easier to type than
        symbols.
      </p>
      {error && <Note kind="error">{error}</Note>}
      <form method="post" action={action}>
        <div>
          <label for="password">New password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="new-password"
            minlength={12}
            required
            autofocus
          />
        </div>
        <div>
          <label for="again">New password, again</label>
          <input id="again" name="again" type="password" autocomplete="new-password" minlength={12} required />
        </div>
        <button type="submit">Set password</button>
      </form>
    </div>
  );
}

function LinkGone({ outcome }: { outcome: Exclude<LinkOutcome, 'set'> }) {
  const why =
    outcome === 'used'
      ? 'This link was used already: a link sets a password once.'
      : outcome === 'expired'
        ? 'This link has expired: a link works for 24 hours.'
        : 'This link is not one callhook made, or it was replaced by a newer one.';
  return (
    <div class="login card">
      <h1>This link cannot be used</h1>
      <Note kind="error">{why}</Note>
      <p>
        Ask an admin to reset your password (on the Users page, or <code>{'callhook users reset <email>'}</code>): that
        gives a new link. If you have set your password already, <a href="/ui/login">sign in</a>.
      </p>
    </div>
  );
}
