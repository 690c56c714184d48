import { Note } from '../components.js';

/**
 * `GET /ui/login` (docs/reference.md#dashboard): a person signs in with their email and password; the admin token has
 * a form of its own below, its one field labelled "Admin token". Shown again with the error of a refused sign-in, or
 * with a note after a password was set through a one-time link.
 */
export function Login({
  error,
  tokenError,
  email,
  done,
}: {
  /** Why the email and password were refused. */
  error?: string;
  /** Why the admin token was refused. */
  tokenError?: string;
  /** The email given, to fill in again. */
  email?: string;
  done?: string;
}) {
  return (
    <div class="login">
      <div class="card">
        <h1>Sign in to callhook</h1>
        {done && <Note kind="ok">{done}</Note>}
        {error && <Note kind="error">{error}</Note>}
        <form method="post" action="/ui/login">
          <div>
            <label for="email">Email</label>
            <input id="email" name="email" type="email" autocomplete="username" value={email} required autofocus />
          </div>
          <div>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </div>
          <button type="submit">Sign in</button>
        </form>
        <p class="muted">No password yet, or forgotten? Ask an admin for a link to set one.</p>
      </div>
      <div class="card">
        <h2>Or with the admin token</h2>
        {tokenError && <Note kind="error">{tokenError}</Note>}
        <form method="post" action="/ui/login">
          <div>
            <label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="off" required />
          </div>
          <button type="submit" class="secondary">
            Sign in with the token
          </button>
        </form>
        <p class="muted">
          The admin token is the one the admin API takes: CALLHOOK_ADMIN_TOKEN, or the one serve printed when it
          generated it. Paste it alone, or the whole line serve printed.
        </p>
      </div>
    </div>
  );
}
