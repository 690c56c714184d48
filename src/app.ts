import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import type { Logger } from 'pino';
import { CallhookError } from './errors.js';
import type { AppEnv } from './http/env.js';
import { adminRoutes, type AdminDeps } from './http/admin.js';
import { healthRoutes, type HealthDeps } from './http/health.js';
import { webhookRoutes, type WebhookDeps } from './http/webhooks.js';

export type AppDeps = WebhookDeps & HealthDeps & AdminDeps & { log: Logger };

/** The Hono app and nothing else: no listening, no side effects, so tests build it with whatever deps they like. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { log } = deps;
  const app = new Hono<AppEnv>();

  app.use(requestId());
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    // One line per request; headers are never logged, so the Authorization header cannot leak.
    const ms = Math.round((performance.now() - started) * 10) / 10;
    log.info({ reqId: c.get('requestId'), method: c.req.method, path: c.req.path, status: c.res.status, ms, ...c.get('summary') }, 'request');
  });

  app.route('/', healthRoutes(deps));
  app.route('/webhooks', webhookRoutes(deps));
  app.route('/admin', adminRoutes(deps));

  app.notFound((c) => c.json(new CallhookError('NOT_FOUND').toBody(), 404));
  app.onError((err, c) => {
    if (err instanceof CallhookError) return c.json(err.toBody(), err.status as 400, Object.fromEntries(c.res.headers));
    if (err instanceof HTTPException) return err.getResponse();
    log.error({ err, reqId: c.get('requestId') }, 'unexpected error');
    return c.json(new CallhookError('INTERNAL').toBody(), 500);
  });
  return app;
}
