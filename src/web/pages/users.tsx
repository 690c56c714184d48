import { type Context, Hono } from 'hono';
import type { PasswordLink, UserOperations, UserView } from '../../admin/users.js';
import { CallhookError } from '../../errors.js';
import { ROLES } from '../../operators/roles.js';
import { CardTable, Done, Note, Time } from '../components.js';
import type { WebContext, WebEnv } from '../context.js';
import type { Clock } from '../time.js';

/**
 * `/ui/users` (admins only, docs/reference.md#operators): the people who sign in, with their role, whether they have
 * set a password, and their personal tokens; and the forms that add a user (the one-time link to set a password is
 * shown once, after), change a role, reset a password (a new link), remove a user (after a page that asks), make a
 * token (shown once, never again) and revoke one. Each goes through the same user operations as `/admin/users`, which
 * check what they are given and keep the change in the audit log.
 */

/** What a form leaves on the page after its redirect: fixed sentences, the user named only when they are listed. */
const DONE = {
  role: 'Role changed: their sessions have ended, and they sign in again with the new role.',
  removed: 'User removed, with their tokens and sessions.',
  revoked: 'Token revoked: it opens nothing from now on.',
};

/** A secret shown this once, after the form that made it. */
type Shown =
  | { kind: 'link'; email: string; link: PasswordLink; reset: boolean }
  | { kind: 'token'; email: string; name: string; token: string };

export function usersPage(
  ctx: WebContext,
  { users, linkOrigin }: { users: UserOperations; linkOrigin: (c: Context) => string },
): Hono<WebEnv> {
  const admin = ctx.allow('admin');
  const list = async (
    c: Context<WebEnv>,
    { status = 200, error, shown }: { status?: 200 | 400 | 404 | 409; error?: string; shown?: Shown } = {},
  ) => {
    const all = ctx.shown(await users.list());
    c.status(status);
    return c.render(
      <Users
        users={all}
        clock={ctx.clock}
        me={c.get('actor').name}
        done={c.req.query('done')}
        error={error}
        shown={shown}
      />,
      {
        title: 'Users',
        section: 'users',
      },
    );
  };
  /** A refused change (a bad address, an unknown role, the last admin) shows the list again with why. */
  const refused = (c: Context<WebEnv>, err: unknown) => {
    if (!(err instanceof CallhookError)) throw err;
    const status = err.status === 404 || err.status === 409 ? err.status : 400;
    return list(c, { status, error: err.message });
  };
  const text = (value: unknown) => (typeof value === 'string' ? value : '');

  return (
    new Hono<WebEnv>()
      .get('/', admin, (c) => list(c))
      .post('/', admin, async (c) => {
        const form = await c.req.parseBody();
        try {
          const { user, link } = await users.add(
            c.get('actor'),
            { email: text(form.email), role: text(form.role) },
            linkOrigin(c),
          );
          return list(c, { shown: link && { kind: 'link', email: user.email, link, reset: false } });
        } catch (err) {
          return refused(c, err);
        }
      })
      .post('/:email/role', admin, async (c) => {
        const form = await c.req.parseBody();
        try {
          await users.setRole(c.get('actor'), c.req.param('email'), text(form.role));
        } catch (err) {
          return refused(c, err);
        }
        return c.redirect('/ui/users?done=role', 303);
      })
      .post('/:email/reset', admin, async (c) => {
        try {
          const { user, link } = await users.reset(c.get('actor'), c.req.param('email'), linkOrigin(c));
          return list(c, { shown: { kind: 'link', email: user.email, link, reset: true } });
        } catch (err) {
          return refused(c, err);
        }
      })
      // Removing asks first, on a page of its own: a plain form cannot ask with a dialog.
      .get('/:email/remove', admin, async (c) => {
        const email = c.req.param('email');
        const user = (await users.list()).find((u) => u.email === email);
        if (!user) throw new CallhookError('NOT_FOUND', `no user ${email}`);
        return c.render(<ConfirmRemove user={ctx.shown(user)} />, { title: 'Remove a user', section: 'users' });
      })
      .post('/:email/remove', admin, async (c) => {
        try {
          await users.remove(c.get('actor'), c.req.param('email'));
        } catch (err) {
          return refused(c, err);
        }
        return c.redirect('/ui/users?done=removed', 303);
      })
      .post('/:email/tokens', admin, async (c) => {
        const form = await c.req.parseBody();
        const name = text(form.name).trim() || undefined;
        try {
          const email = c.req.param('email');
          const { token, info } = await users.addToken(c.get('actor'), email, name);
          return list(c, { shown: { kind: 'token', email, name: info.name, token } });
        } catch (err) {
          return refused(c, err);
        }
      })
      .post('/tokens/:id/revoke', admin, async (c) => {
        try {
          await users.revokeToken(c.get('actor'), c.req.param('id'));
        } catch (err) {
          return refused(c, err);
        }
        return c.redirect('/ui/users?done=revoked', 303);
      })
  );
}

const path = (email: string, action: string) => `/ui/users/${encodeURIComponent(email)}/${action}`;

function Users({
  users,
  clock,
  me,
  done,
  error,
  shown,
}: {
  users: UserView[];
  clock: Clock;
  me: string;
  done?: string;
  error?: string;
  shown?: Shown;
}) {
  return (
    <>
      <h1>Users</h1>
      <Done messages={DONE} code={done} />
      {error && <Note kind="error">{error}</Note>}
      {shown && <ShownOnce shown={shown} clock={clock} />}
      <p class="muted">
        A viewer reads every page; an operator also edits, releases, redelivers, retries, ingests, pauses sinks and
        acknowledges incidents; an admin also manages users and tokens and reads the audit log.
      </p>
      {users.length === 0 ? (
        <Note kind="info">No users yet: add the first below. Until then the admin token signs in.</Note>
      ) : (
        <CardTable label="Users" columns={['User', 'Role', 'Password', 'Added', 'Tokens', 'Actions']}>
          {users.map((user) => (
            <UserRow user={user} me={me} clock={clock} />
          ))}
        </CardTable>
      )}
      <h2 id="add-user">Add a user</h2>
      <form method="post" action="/ui/users" class="card filters" aria-labelledby="add-user">
        <div>
          <label for="new-email">Email</label>
          <input id="new-email" name="email" type="email" autocomplete="off" required />
        </div>
        <div>
          <label for="new-role">Role</label>
          <RoleSelect id="new-role" selected="viewer" />
        </div>
        <div class="actions">
          <button type="submit">Add user</button>
        </div>
      </form>
      <p class="muted">
        Adding a user shows a one-time link, once: give it to them, and they set their own password with it within 24
        hours.
      </p>
    </>
  );
}

function UserRow({ user, me, clock }: { user: UserView; me: string; clock: Clock }) {
  const id = user.email.replace(/[^a-z0-9]/g, '-');
  return (
    <tr>
      <th scope="row" data-label="User">
        <span>
          {user.email}
          {user.email === me && <span class="muted"> (you)</span>}
        </span>
      </th>
      <td data-label="Role">
        <form class="inline" method="post" action={path(user.email, 'role')}>
          <label for={`role-${id}`} class="visually-hidden">
            Role of {user.email}
          </label>
          <RoleSelect id={`role-${id}`} selected={user.role} />
          <button type="submit" class="secondary" aria-label={`Change the role of ${user.email}`}>
            Change
          </button>
        </form>
      </td>
      <td data-label="Password">{user.password_set ? 'set' : <span class="muted">not yet</span>}</td>
      <td data-label="Added">
        <Time at={user.created_at} clock={clock} />
      </td>
      <td data-label="Tokens">
        {/* One child: a phone's card row lays a cell's children side by side. */}
        <div>
          {user.tokens.length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <ul class="tokens">
              {user.tokens.map((token) => (
                <li>
                  <strong>{token.name}</strong>{' '}
                  <span class="muted">
                    made <Time at={token.created_at} clock={clock} />, last used{' '}
                    {token.last_used_at === null ? 'never' : <Time at={token.last_used_at} clock={clock} />}
                  </span>
                  <form class="inline" method="post" action={`/ui/users/tokens/${encodeURIComponent(token.id)}/revoke`}>
                    <button
                      type="submit"
                      class="secondary"
                      aria-label={`Revoke the token ${token.name} of ${user.email}`}
                    >
                      Revoke
                    </button>
                  </form>
                </li>
              ))}
            </ul>
          )}
          <form class="inline" method="post" action={path(user.email, 'tokens')}>
            <label for={`token-${id}`} class="visually-hidden">
              Name of a new token for {user.email}
            </label>
            <input id={`token-${id}`} name="name" placeholder="token name" autocomplete="off" />
            <button type="submit" class="secondary" aria-label={`Make a token for ${user.email}`}>
              Make token
            </button>
          </form>
        </div>
      </td>
      <td data-label="Actions">
        <div class="actions">
          <form class="inline" method="post" action={path(user.email, 'reset')}>
            <button type="submit" class="secondary" aria-label={`Reset the password of ${user.email}`}>
              Reset password
            </button>
          </form>
          <a class="button secondary" href={path(user.email, 'remove')} aria-label={`Remove ${user.email}…`}>
            Remove…
          </a>
        </div>
      </td>
    </tr>
  );
}

function RoleSelect({ id, selected }: { id: string; selected: string }) {
  return (
    <select id={id} name="role">
      {ROLES.map((role) => (
        <option value={role} selected={role === selected}>
          {role}
        </option>
      ))}
    </select>
  );
}

/** A new link or token, shown on the page that made it and never again (it is kept as a digest only). */
function ShownOnce({ shown, clock }: { shown: Shown; clock: Clock }) {
  if (shown.kind === 'link')
    return (
      <section class="card shown" aria-labelledby="shown-once">
        <h2 id="shown-once">
          {shown.reset ? 'Password reset' : 'User added'}: {shown.email}
        </h2>
        <p>
          Give them this link to set {shown.reset ? 'a new' : 'their'} password. It works once, until{' '}
          <Time at={shown.link.expires_at} clock={clock} />, and is shown only now.
        </p>
        <label for="shown-secret">One-time link</label>
        <input id="shown-secret" readonly value={shown.link.url} />
      </section>
    );
  return (
    <section class="card shown" aria-labelledby="shown-once">
      <h2 id="shown-once">
        Token {shown.name} made for {shown.email}
      </h2>
      <p>
        Copy it now: it is shown only this once. It opens the admin API and the CLI (as <code>CALLHOOK_TOKEN</code>)
        with {shown.email}'s role, until it is revoked.
      </p>
      <label for="shown-secret">Token</label>
      <input id="shown-secret" readonly value={shown.token} />
    </section>
  );
}

function ConfirmRemove({ user }: { user: UserView }) {
  return (
    <>
      <h1>Remove {user.email}?</h1>
      <form method="post" action={path(user.email, 'remove')} class="card">
        <p>
          This removes <strong>{user.email}</strong> ({user.role}) with their {user.tokens.length}{' '}
          {user.tokens.length === 1 ? 'token' : 'tokens'}, and signs them out everywhere. What they did stays in the
          audit log under their address.
        </p>
        <div class="actions">
          <button type="submit" class="danger">
            Remove {user.email}
          </button>
          <a href="/ui/users">Cancel</a>
        </div>
      </form>
    </>
  );
}
