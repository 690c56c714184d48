import { Note } from '../components.js';
import type { Refusal } from '../origin.js';

/**
 * The answer to a POST the origin check refused (origin.ts, docs/reference.md#dashboard), with status 403. Most who
 * meet it are signing in through a reverse proxy that does not pass `Host`, so the page shows the origin the browser
 * sent beside the one callhook sees, and says what to check (docs/deploying.md#nginx); an attack gets the same page
 * and nothing done.
 */
export function OtherSite({ origin, page }: Refusal) {
  const seen = page.host === undefined ? 'no host at all' : `${page.scheme ? `${page.scheme}://` : ''}${page.host}`;
  return (
    <div class="card">
      <h1>This form was sent from another site</h1>
      <Note kind="error">
        callhook refused it and did nothing. The browser sent it from{' '}
        {origin === undefined ? (
          'another site'
        ) : origin === 'null' ? (
          'no site (its origin was "null")'
        ) : (
          <b>{origin}</b>
        )}
        , but callhook was reached as <b>{seen}</b>.
      </Note>
      <h2>Behind a reverse proxy</h2>
      <p>
        When nginx, Caddy or a load balancer sits in front of callhook, callhook must see the host the browser asked
        for. Check one of these:
      </p>
      <ul>
        <li>
          The proxy passes the <code>Host</code> header on. In nginx, beside <code>proxy_pass</code>:{' '}
          <code>proxy_set_header Host $http_host;</code> (or <code>proxy_set_header Host $host;</code>, which drops the
          port: enough when the address has none). Caddy passes it by itself.
        </li>
        <li>
          Or the proxy sets <code>X-Forwarded-Host</code>, and <code>X-Forwarded-Proto</code> when it ends TLS, and
          callhook's config says <code>trust_proxy: true</code>.
        </li>
      </ul>
      <p>
        Then load the sign-in page again. The guide to deploying callhook (docs/deploying.md in its repository) has a
        complete nginx block and a Caddyfile.
      </p>
      <p class="muted">If you did not send this form yourself, another site tried to act with your session.</p>
      <p>
        <a href="/ui/login">Back to sign-in</a>
      </p>
    </div>
  );
}
