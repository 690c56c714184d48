import { Note } from '../components.js';

/**
 * `GET /ui/login` (docs/reference.md#dashboard): one password field labelled "Admin token"; again with an error after a
 * wrong one.
 */
export function Login({ error }: { error?: string }) {
  return (
    <div class="login card">
      <h1>Sign in to callhook</h1>
      {error && <Note kind="error">{error}</Note>}
      <form method="post" action="/ui/login">
        <div>
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        </div>
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">
        The admin token is the one the admin API takes: CALLHOOK_ADMIN_TOKEN, or the one serve printed when it generated
        it. Paste it alone, or the whole line serve printed.
      </p>
    </div>
  );
}
