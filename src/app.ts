import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import { auditedOperations } from './admin/audited.js';
import type { AdminOperations } from './admin/operations.js';
import type { AlertEvents } from './alerts/monitor.js';
import { CallhookError } from './errors.js';
import { type AdminDeps, adminRoutes } from './http/admin.js';
import { requireBearer } from './http/auth.js';
import { type AuthLimiter, createAuthLimiter } from './http/auth-limit.js';
import { clientAddress } from './http/client-address.js';
import type { AppEnv } from './http/env.js';
import { type HealthDeps, healthRoutes } from './http/health.js';
import { requestId } from './http/request-id.js';
import { type WebhookDeps, webhookRoutes } from './http/webhooks.js';
import type { Intake } from './intake/intake.js';
import type { KeyRing } from './keys/ring.js';
import { requestLogger } from './log.js';
import type { Metrics } from './metrics.js';
import { DEFAULT_RETENTION, keptParts, type RetentionConfig } from './privacy/retention-config.js';
import { type SecretList, secretMasker } from './secrets.js';
import { type DashboardDeps, dashboardRoutes, loggedPath } from './web/dashboard.js';

/** What the app is built from: each part built once by serve (main.ts), or by a test with whatever fakes it likes. */
export interface AppDeps {
  log: Logger;
  /** `/metrics` is served when given. */
  metrics?: Metrics;
  /** What the routes read, and the receipts of refused requests; calls are committed through `intake`. */
  store: WebhookDeps['store'] &
    HealthDeps['store'] &
    DashboardDeps['store'] &
    DashboardDeps['operators'] &
    AdminDeps['tokens'];
  http: HttpOptions;
  keys: AppKeys;
  /** The hooks and the way in for their calls (intake/intake.ts). */
  intake: Intake;
  /** The operations the admin API and the dashboard share (admin/operations.ts). */
  admin: AdminOperations;
  /** What readiness (and the dashboard's overview) reports besides the store. */
  health: Pick<HealthDeps, 'workerRunning' | 'accepting'>;
  /** What the alert rules hear of the webhooks (alerts/monitor.ts); nothing when no channel is configured. */
  alerts?: AlertEvents;
  /** What is kept how long, for the dashboard's overview (docs/reference.md#retention): nothing removed when absent. */
  retention?: RetentionConfig;
}

/** How the routes treat a request, from the config. */
export interface HttpOptions {
  /** The config's `body_limit`: what a webhook body may weigh, and a refused request ingested again. */
  bodyLimitBytes: number;
  /** Sheds repeated failed authentication, for every bearer check and the dashboard's sign-in alike. */
  limiter?: AuthLimiter;
  /** The limiter counts the last X-Forwarded-For hop, not the peer (docs/reference.md#exposure, client-address.ts). */
  trustProxy?: boolean;
  /** The dashboard's session cookie is `Secure` whatever the request's scheme (docs/reference.md#dashboard). */
  secureCookies?: boolean;
  /** The config's `public_url`: where a one-time link to set a password points (docs/reference.md#operators). */
  publicUrl?: string;
  /** When set, `/metrics` answers only a request bearing it (docs/reference.md#metrics). */
  metricsToken?: string;
  /** The zone the admin API reads dates in and the dashboard shows times in (docs/reference.md#time-zone). */
  timezone?: string;
  /** How long a store write or read may take before the reply is a 503 (http/deadline.ts). */
  storeDeadlineMs?: number;
}

/** The keys the routes check and the secrets every reply is masked of. */
export interface AppKeys {
  /** A ring when callhook keeps the token (no CALLHOOK_ADMIN_TOKEN), read again while serving (keys/ring.ts). */
  adminToken: string | KeyRing;
  /** The global webhook keys when callhook keeps them (no CALLHOOK_API_KEYS), read again while serving. */
  globalKeys?: KeyRing;
  /** Masked out of every reply; a set may grow while serving (kept keys). */
  secrets: SecretList;
}

/** The Hono app and nothing else: no listening, no side effects, so tests build it with whatever deps they like. */
export function createApp({
  log,
  metrics,
  store,
  http,
  keys,
  intake,
  admin,
  health,
  alerts,
  retention = DEFAULT_RETENTION,
}: AppDeps): Hono<AppEnv> {
  const {
    bodyLimitBytes,
    trustProxy = false,
    secureCookies,
    metricsToken,
    timezone,
    storeDeadlineMs,
    publicUrl,
  } = http;
  const { adminToken, globalKeys, secrets } = keys;
  const limiter = http.limiter ?? createAuthLimiter();
  const app = new Hono<AppEnv>();
  const requestLog = requestLogger(log);
  const mask = secretMasker(secrets);
  // The dashboard's overview shows the webhook requests refused for a wrong key since start
  // (docs/reference.md#dashboard): nothing of them is stored, so this process counts them as it answers.
  let wrongKeys = 0;

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const summary = c.get('summary');
    if (c.res.status === 401 && c.req.path.startsWith('/webhooks/')) wrongKeys++;
    // Only a configured hook names a metric label: a client cannot grow the label set.
    if (summary?.hook) metrics?.observeRequest(summary.hook, summary.outcome ?? String(c.res.status), seconds);
    // One line per request; headers are never logged, so the Authorization header cannot leak. The address is the
    // client's as the limiter counts it (docs/reference.md#exposure, trust_proxy).
    const remote = clientAddress(c, trustProxy);
    requestLog.info(
      {
        reqId: c.get('requestId'),
        method: c.req.method,
        // A one-time link's secret is its path: logged as `/ui/password/…` (docs/reference.md#operators).
        path: loggedPath(c.req.path),
        status: c.res.status,
        ms: Math.round(seconds * 10_000) / 10,
        remote,
        ...summary,
      },
      'request',
    );
  });

  app.route('/', healthRoutes({ store, log, storeDeadlineMs, ...health }));
  if (metrics) {
    // Failed tokens count against the same limiter as the other bearer checks.
    if (metricsToken) app.use('/metrics', requireBearer([metricsToken], limiter, trustProxy));
    // Labels hold configured names only (metrics.ts), but a sink or hook named after a secret must not show it.
    app.get('/metrics', async (c) => {
      const { contentType, body } = await metrics.render();
      return c.body(mask(body), 200, { 'content-type': contentType });
    });
  }
  app.route(
    '/webhooks',
    webhookRoutes({
      intake,
      store,
      log,
      bodyLimitBytes,
      limiter,
      trustProxy,
      storeDeadlineMs,
      globalKeys,
      alerts,
      timezone,
    }),
  );
  app.route(
    '/admin',
    adminRoutes({
      admin,
      intake,
      adminToken,
      tokens: store,
      publicUrl,
      secrets,
      limiter,
      trustProxy,
      bodyLimitBytes,
      timezone,
    }),
  );
  app.route(
    '/ui',
    dashboardRoutes({
      store,
      operators: store,
      admin,
      // Every change made on a page is kept in the audit log with the signed-in person's name.
      acting: auditedOperations(admin, admin.audit),
      users: admin.users,
      audit: admin.audit,
      publicUrl,
      intake,
      adminToken,
      secrets,
      limiter,
      trustProxy,
      bodyLimitBytes,
      timezone,
      secureCookies,
      ...health,
      wrongKeys: () => wrongKeys,
      retention: keptParts(retention),
      log,
    }),
  );

  app.notFound((c) => c.json(new CallhookError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`).toBody(), 404));
  app.onError((err, c) => {
    if (err instanceof CallhookError) {
      // An error's words can quote a request's path or a server's reply: masked as every other reply is (section 6).
      const headers = new Headers(c.res.headers);
      headers.set('content-type', 'application/json');
      return new Response(mask(JSON.stringify(err.toBody())), { status: err.status, headers });
    }
    if (err instanceof HTTPException) return err.getResponse();
    log.error({ err, reqId: c.get('requestId') }, 'unexpected error');
    return c.json(new CallhookError('INTERNAL').toBody(), 500);
  });
  return app;
}
