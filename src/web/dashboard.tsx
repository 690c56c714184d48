import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import type { Logger } from 'pino';
import type { AdminOperations } from '../admin/operations.js';
import { CallhookError } from '../errors.js';
import type { AuthLimiter } from '../http/auth-limit.js';
import { clientAddress } from '../http/client-address.js';
import type { Intake } from '../intake/intake.js';
import { createKeyRing, isKeyRing, type KeyRing } from '../keys/ring.js';
import { maskBytes, type SecretList, secretMasker } from '../secrets.js';
import { Note } from './components.js';
import type { WebContext } from './context.js';
import { IncidentBanner } from './incident-banner.js';
import { layout } from './layout.js';
import { overHttps, sameOrigin } from './origin.js';
import { callPage } from './pages/call.js';
import { callsPage } from './pages/calls.js';
import { deliveriesPage } from './pages/deliveries.js';
import { editPage } from './pages/edit.js';
import { incidentsPage } from './pages/incidents.js';
import { Login } from './pages/login.js';
import { OtherSite } from './pages/other-site.js';
import { overviewPage } from './pages/overview.js';
import { refusedPage } from './pages/refused.js';
import { reviewPage } from './pages/review.js';
import { sinksPage } from './pages/sinks.js';
import { pastedToken } from './pasted-token.js';
import { createSessions, SESSION_COOKIE } from './session.js';
import { STYLESHEET } from './style.js';
import { createClock } from './time.js';

export interface DashboardDeps {
  /** What the pages read. */
  store: WebContext['store'];
  /** What the pages' actions do, built once by serve and shared with the admin API (admin/operations.ts). */
  admin: AdminOperations;
  /** The configured hooks, whose parameters the pages show and edit. */
  intake: Pick<Intake, 'hooks'>;
  adminToken: string | KeyRing;
  secrets: SecretList;
  limiter: AuthLimiter;
  trustProxy?: boolean;
  bodyLimitBytes: number;
  /** An IANA zone: the config's `timezone`, else the server's. */
  timezone?: string;
  /** The config's `secure_cookies`: the session cookie is `Secure` even over plain HTTP. */
  secureCookies?: boolean;
  workerRunning: () => boolean;
  accepting: () => boolean;
  /** Webhook requests refused for a wrong key (401) since the process started. */
  wrongKeys: () => number;
  /** What is kept how long, one part a kind (privacy/retention-config.ts keptParts); `calls kept forever` when absent. */
  retention?: readonly string[];
  log: Logger;
}

/**
 * The operator's dashboard at `/ui` (docs/reference.md#dashboard): pages rendered on the server with hono/jsx, a plain
 * HTML form for every action, one stylesheet served from here. Signed in with the admin token, which becomes a signed
 * session cookie (session.ts); every POST is checked for its origin (origin.ts); the Content-Security-Policy lets a
 * page load nothing from another origin, and runs no inline script, so even text that got past the escaping could not
 * run.
 */
export function dashboardRoutes(deps: DashboardDeps): Hono {
  const { store, admin, limiter, trustProxy = false, secureCookies = false } = deps;
  const ring = isKeyRing(deps.adminToken) ? deps.adminToken : createKeyRing([deps.adminToken]);
  const sessions = createSessions(ring);
  const mask = secretMasker(deps.secrets);
  const ctx: WebContext = {
    store,
    hooks: deps.intake.hooks,
    sinkNames: admin.sinkNames,
    testSinks: admin.testSinks,
    calls: admin.calls,
    deliveries: admin.deliveries,
    receipts: admin.receipts,
    sinks: admin.sinks,
    incidents: admin.incidents,
    clock: createClock(deps.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone),
    shown: (value) => (value === undefined ? value : JSON.parse(mask(JSON.stringify(value)))),
    maskBody: (bytes) => maskBytes(bytes, deps.secrets),
    workerRunning: deps.workerRunning,
    accepting: deps.accepting,
    wrongKeys: deps.wrongKeys,
    retention: deps.retention ?? ['calls kept forever'],
    log: deps.log,
  };

  const signedIn = (c: Context) => sessions.valid(getCookie(c, SESSION_COOKIE));

  const app = new Hono()
    .use(
      secureHeaders({
        contentSecurityPolicy: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          objectSrc: ["'none'"],
        },
        // Not no-referrer (hono's default): under it a browser sends `Origin: null` on its own forms' POSTs, which
        // the origin check must refuse. same-origin still tells nothing to other sites.
        referrerPolicy: 'same-origin',
        // HSTS is the TLS end's to send (a proxy's): from here, with includeSubDomains, it would bind every other
        // host of the operator's domain to HTTPS for half a year.
        strictTransportSecurity: false,
      }),
    )
    .use(async function noStore(c, next) {
      await next();
      if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
    })
    // Last of all, whatever a page shows passes the masker once more (docs/reference.md#dashboard: no page shows a
    // secret): the pages mask what they show before JSX escapes it, and this catches what a page forgot.
    .use(async function maskPage(c, next) {
      await next();
      if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
      const html = await c.res.text();
      c.res = new Response(mask(html), { status: c.res.status, headers: c.res.headers });
    })
    // The open incidents above every page, for a signed-in operator only: a page served before the sign-in check (an
    // error, a refused form) names none of them.
    .use(
      layout(ctx.clock.zone, {
        banner: (c) => signedIn(c) && <IncidentBanner read={() => ctx.incidents.open()} log={deps.log} />,
      }),
    )
    // Before any body is read: a refused POST gets a page (with the layout above) saying what to check behind a proxy.
    .use(
      sameOrigin({
        trustProxy,
        refuse: (c, refusal) => {
          c.status(403);
          return c.render(<OtherSite {...refusal} />, { title: 'Sent from another site' });
        },
      }),
    )
    // A refused request's body, corrected, may weigh up to body_limit; a form writes a byte as up to 3 (%XX).
    .use(
      bodyLimit({
        maxSize: 64 * 1024 + deps.bodyLimitBytes * 3,
        onError: (c) => c.text('The form is too large.', 413),
      }),
    )
    .get('/assets/style.css', (c) =>
      c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=300' }),
    )
    .get('/login', (c) => (signedIn(c) ? c.redirect('/ui', 303) : c.render(<Login />, { title: 'Sign in' })))
    .post('/login', async (c) => {
      const token = (await c.req.parseBody()).token;
      // Pasted however it was copied: bare, after `Bearer `, or as the line serve prints (pasted-token.ts).
      if (typeof token === 'string' && ring.accepts(pastedToken(token))) {
        const { value, maxAgeSeconds } = sessions.begin();
        setCookie(c, SESSION_COOKIE, value, {
          httpOnly: true,
          sameSite: 'Strict',
          path: '/ui',
          secure: secureCookies || overHttps(c, trustProxy),
          maxAge: maxAgeSeconds,
        });
        return c.redirect('/ui', 303);
      }
      // The same limiter as the bearer checks (docs/reference.md#dashboard): a wrong token counts as a failed sign-in.
      const address = clientAddress(c, trustProxy);
      const waitMs = limiter.retryAfterMs(address);
      if (waitMs > 0) {
        c.status(429);
        c.header('retry-after', String(Math.ceil(waitMs / 1000)));
        return c.render(<Login error="Too many failed sign-ins from this address: wait a minute and try again." />, {
          title: 'Sign in',
        });
      }
      limiter.fail(address);
      c.status(401);
      return c.render(<Login error="That is not the admin token." />, { title: 'Sign in' });
    })
    .post('/logout', (c) => {
      sessions.end(getCookie(c, SESSION_COOKIE));
      deleteCookie(c, SESSION_COOKIE, {
        path: '/ui',
        httpOnly: true,
        sameSite: 'Strict',
        secure: secureCookies || overHttps(c, trustProxy),
      });
      return c.redirect('/ui/login', 303);
    })
    .use(async function session(c, next) {
      if (!signedIn(c)) return c.redirect('/ui/login', 303);
      await next();
    })
    .route('/', overviewPage(ctx))
    .route('/calls', callsPage(ctx))
    .route('/calls', callPage(ctx))
    .route('/calls', editPage(ctx))
    .route('/review', reviewPage(ctx))
    .route('/deliveries', deliveriesPage(ctx))
    .route('/sinks', sinksPage(ctx))
    .route('/refused', refusedPage(ctx))
    .route('/incidents', incidentsPage(ctx))
    .all('*', (c) => {
      c.status(404);
      return c.render(<ErrorPage status={404} message={`There is no page ${c.req.path}.`} />, {
        title: 'Not found',
        section: 'overview',
      });
    });

  app.onError((err, c) => {
    if (!(err instanceof CallhookError)) {
      deps.log.error({ err, path: c.req.path }, 'dashboard: unexpected error');
    }
    const status = err instanceof CallhookError ? err.status : 500;
    const message = err instanceof CallhookError ? err.message : 'Something went wrong; the log says what.';
    c.status(status as 400);
    return c.render(<ErrorPage status={status} message={mask(message)} />, { title: 'Error', section: 'overview' });
  });
  return app;
}

function ErrorPage({ status, message }: { status: number; message: string }) {
  return (
    <>
      <h1>{status === 404 ? 'Not found' : status === 409 ? 'Not done' : 'Error'}</h1>
      <Note kind="error">{message}</Note>
      <p>
        <a href="/ui">Back to the overview</a>
      </p>
    </>
  );
}
