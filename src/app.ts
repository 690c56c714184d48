import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import { CallhookError } from './errors.js';
import { type AdminDeps, adminRoutes } from './http/admin.js';
import { requireBearer } from './http/auth.js';
import { createAuthLimiter } from './http/auth-limit.js';
import { clientAddress } from './http/client-address.js';
import type { AppEnv } from './http/env.js';
import { type HealthDeps, healthRoutes } from './http/health.js';
import { requestId } from './http/request-id.js';
import { type WebhookDeps, webhookRoutes } from './http/webhooks.js';
import { requestLogger } from './log.js';
import type { Metrics } from './metrics.js';
import { secretMasker } from './secrets.js';
import { type DashboardDeps, dashboardRoutes } from './web/dashboard.js';

export type AppDeps = WebhookDeps &
  HealthDeps &
  AdminDeps &
  Pick<DashboardDeps, 'store'> & {
    log: Logger;
    metrics?: Metrics;
    /** Contract section 6: when set, `/metrics` answers only a request bearing it. */
    metricsToken?: string;
    /** Contract section 11: the dashboard's session cookie is `Secure` whatever the request's scheme. */
    secureCookies?: boolean;
  };

/** The Hono app and nothing else: no listening, no side effects, so tests build it with whatever deps they like. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { log, metrics } = deps;
  const routeDeps = { ...deps, limiter: deps.limiter ?? createAuthLimiter() };
  const app = new Hono<AppEnv>();
  const requestLog = requestLogger(log);
  const mask = secretMasker(deps.secrets);
  // The dashboard's overview shows the webhook requests refused for a wrong key since start (contract section 11):
  // nothing of them is stored, so this process counts them as it answers.
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
    // client's as the limiter counts it (contract section 6, trust_proxy).
    const remote = clientAddress(c, deps.trustProxy ?? false);
    requestLog.info(
      {
        reqId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(seconds * 10_000) / 10,
        remote,
        ...summary,
      },
      'request',
    );
  });

  app.route('/', healthRoutes(routeDeps));
  if (metrics) {
    // Failed tokens count against the same limiter as the other bearer checks.
    if (deps.metricsToken) app.use('/metrics', requireBearer([deps.metricsToken], routeDeps.limiter, deps.trustProxy));
    // Labels hold configured names only (metrics.ts), but a sink or hook named after a secret must not show it.
    app.get('/metrics', async (c) => {
      const { contentType, body } = await metrics.render();
      return c.body(mask(body), 200, { 'content-type': contentType });
    });
  }
  app.route('/webhooks', webhookRoutes(routeDeps));
  app.route('/admin', adminRoutes(routeDeps));
  app.route('/ui', dashboardRoutes({ ...routeDeps, wrongKeys: () => wrongKeys }));

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
