import { serve } from '@hono/node-server';
import { Hono } from 'hono';

/**
 * The ceiling: the same HTTP stack as callhook (Hono on @hono/node-server) with nothing behind the route.
 * The body is still read, so the figure includes receiving the same bytes callhook receives.
 */

const app = new Hono().post('/webhooks/:hook', async (c) => {
  await c.req.arrayBuffer();
  return c.json({ status: 'accepted' }, 200);
});

const server = serve(
  { fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: process.env.HOST ?? '127.0.0.1' },
  (info) => {
    process.stderr.write(`hono-empty listening on http://${info.address}:${info.port}\n`);
  },
);

process.on('SIGTERM', () => server.close(() => process.exit(0)));
