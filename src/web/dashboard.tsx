import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import type { Logger } from 'pino';
import type { AdminOperations } from '../admin/operations.js';
import type { UserOperations } from '../admin/users.js';
import { CallhookError } from '../errors.js';
import type { AuthLimiter } from '../http/auth-limit.js';
import { clientAddress } from '../http/client-address.js';
import type { Intake } from '../intake/intake.js';
import { createKeyRing, isKeyRing, type KeyRing } from '../keys/ring.js';
import type { AuditLog } from '../operators/audit.js';
import { allow } from '../operators/guard.js';
import { type Actor, ADMIN_TOKEN_ACTOR } from '../operators/roles.js';
import { maskBytes, type SecretList, secretMasker } from '../secrets.js';
import type { OperatorStore } from '../store/operators.js';
import { Note } from './components.js';
import type { WebContext, WebEnv } from './context.js';
import { IncidentBanner } from './incident-banner.js';
import { layout } from './layout.js';
import { overHttps, publicOrigin, sameOrigin } from './origin.js';
import { auditPage } from './pages/audit.js';
import { callPage } from './pages/call.js';
import { callsPage } from './pages/calls.js';
import { deliveriesPage } from './pages/deliveries.js';
import { editPage } from './pages/edit.js';
import { incidentsPage } from './pages/incidents.js';
import { OtherSite } from './pages/other-site.js';
import { overviewPage } from './pages/overview.js';
import { passwordPage } from './pages/password.js';
import { refusedPage } from './pages/refused.js';
import { reviewPage } from './pages/review.js';
import { sinksPage } from './pages/sinks.js';
import { usersPage } from './pages/users.js';
import { createSessions, SESSION_COOKIE, type SessionHolder } from './session.js';
import { signIn } from './sign-in.js';
import { STYLESHEET } from './style.js';
import { createClock } from './time.js';

export interface DashboardDeps {
  /** What the pages read. */
  store: WebContext['store'];
  /** The people who sign in: their users, sessions, one-time links and the audit log (store/operators.ts). */
  operators: Pick<
    OperatorStore,
    'findUser' | 'addSession' | 'findSession' | 'endSession' | 'checkPasswordLink' | 'usePasswordLink' | 'listAudit'
  >;
  /** What the pages' actions do, built once by serve and shared with the admin API (admin/operations.ts). */
  admin: AdminOperations;
  /**
   * The same operations acting as one person (admin/audited.ts `auditedOperations(admin, audit)`): each change is
   * kept in the audit log with their name.
   */
  acting: (actor: Actor) => AdminOperations;
  /** Users and their tokens, managed on /ui/users, as through the admin API (admin/users.ts). */
  users: UserOperations;
  audit: AuditLog;
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
  /** The config's `public_url`: where a one-time link points; else the address the request came to. */
  publicUrl?: string;
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
 * HTML form for every action, one stylesheet served from here. People sign in as themselves (a user's email and
 * password) or with the admin token, which begins a session kept in the store (session.ts); every page and form names
 * the role it needs (operators/guard.ts) and each change goes through the operations acting as the signed-in person,
 * so the audit log keeps it with their name. Every POST is checked for its origin (origin.ts); the
 * Content-Security-Policy lets a page load nothing from another origin, and runs no inline script, so even text that
 * got past the escaping could not run.
 */
export function dashboardRoutes(deps: DashboardDeps): Hono<WebEnv> {
  const { store, operators, admin, audit, limiter, trustProxy = false, secureCookies = false } = deps;
  const ring = isKeyRing(deps.adminToken) ? deps.adminToken : createKeyRing([deps.adminToken]);
  const sessions = createSessions({ store: operators, ring });
  const mask = secretMasker(deps.secrets);
  const ctx: WebContext = {
    store,
    hooks: deps.intake.hooks,
    sinkNames: admin.sinkNames,
    testSinks: admin.testSinks,
    act: (c) => deps.acting(c.get('actor')),
    // A refusal is kept in the audit log (docs/reference.md#audit-log): who tried what, beyond their role.
    allow: (role) =>
      allow<WebEnv>(role, (actor, method, path) => audit.record(actor, 'forbidden', `${method} ${path}`, 'FORBIDDEN')),
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
  const cookie = (c: Context) => ({
    path: '/ui',
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure: secureCookies || overHttps(c, trustProxy),
  });
  const actorOf = (holder: SessionHolder, address: string): Actor =>
    'user' in holder
      ? { name: holder.user.email, role: holder.user.role, userId: holder.user.id, via: 'session', address }
      : { name: ADMIN_TOKEN_ACTOR, role: 'admin', via: 'session', address };
  // Where a one-time link points: the configured public URL, else the origin the browser reached (with trust_proxy,
  // the proxy's), as the admin API makes it (docs/reference.md#operators).
  const linkOrigin = (c: Context) => {
    if (deps.publicUrl) return deps.publicUrl.replace(/\/+$/, '');
    const { scheme, host } = publicOrigin(c, trustProxy);
    return `${scheme ?? new URL(c.req.url).protocol.replace(':', '')}://${host ?? new URL(c.req.url).host}`;
  };

  const app = new Hono<WebEnv>()
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
    // The open incidents above every page, for a signed-in person only: a page served before the sign-in check (an
    // error, a refused form) names none of them.
    .use(
      layout(ctx.clock.zone, {
        banner: (c) =>
          c.get('actor') !== undefined && <IncidentBanner read={() => ctx.incidents.open()} log={deps.log} />,
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
    // What anyone may open, signed in or not: the stylesheet, the sign-in and a one-time link to set a password.
    .get('/assets/style.css', (c) =>
      c.body(STYLESHEET, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=300' }),
    )
    .route(
      '/',
      signIn({
        sessions,
        operators,
        ring,
        limiter,
        audit,
        trustProxy,
        cookie,
      }),
    )
    .route('/password', passwordPage({ operators, audit, trustProxy }))
    .post('/logout', async (c) => {
      const value = getCookie(c, SESSION_COOKIE);
      const holder = await sessions.find(value);
      await sessions.end(value);
      deleteCookie(c, SESSION_COOKIE, cookie(c));
      if (holder) await audit.record(actorOf(holder, clientAddress(c, trustProxy)), 'sign-out', null, 'ok');
      return c.redirect('/ui/login', 303);
    })
    // Every other page needs a live session, looked up in the store on every request (one indexed read): a sign-out,
    // a removed user or a changed role on any replica ends it here at once.
    .use(async function session(c, next) {
      const holder = await sessions.find(getCookie(c, SESSION_COOKIE));
      if (!holder) return c.redirect('/ui/login', 303);
      c.set('actor', actorOf(holder, clientAddress(c, trustProxy)));
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
    .route('/users', usersPage(ctx, { users: deps.users, linkOrigin }))
    .route('/audit', auditPage(ctx, { operators }))
    .all('*', (c) => {
      c.status(404);
      return c.render(<ErrorPage status={404} message={`There is no page ${c.req.path}.`} />, {
        title: 'Not found',
        section: 'overview',
      });
    });

  app.onError((err, c) => {
    if (!(err instanceof CallhookError)) {
      deps.log.error({ err, path: loggedPath(c.req.path) }, 'dashboard: unexpected error');
    }
    const status = err instanceof CallhookError ? err.status : 500;
    const message = err instanceof CallhookError ? err.message : 'Something went wrong; the log says what.';
    c.status(status as 400);
    const title = status === 403 ? 'Not allowed' : 'Error';
    return c.render(<ErrorPage status={status} message={mask(message)} />, { title, section: 'overview' });
  });
  return app;
}

/**
 * A request's path as a log line may show it: a one-time link's secret is the path itself
 * (docs/reference.md#operators), and anyone who reads the log could set that user's password with it.
 */
export function loggedPath(path: string): string {
  // Any path through a `password` folder, however it is cased or slashed: one the router did not match may still be a
  // link mistyped.
  return path.replace(/(\/password\/).*$/is, '$1…');
}

function ErrorPage({ status, message }: { status: number; message: string }) {
  return (
    <>
      <h1>{status === 404 ? 'Not found' : status === 409 ? 'Not done' : status === 403 ? 'Not allowed' : 'Error'}</h1>
      <Note kind="error">{message}</Note>
      <p>
        <a href="/ui">Back to the overview</a>
      </p>
    </>
  );
}
