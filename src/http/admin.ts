import { Hono } from 'hono';
import { maskSecrets } from '../secrets.js';
import { CallhookError } from '../errors.js';
import type { Store } from '../store/store.js';
import { requireBearer } from './auth.js';

export interface AdminDeps {
  store: Store;
  adminToken: string;
  /** Masked out of every admin reply, whatever field they hide in. */
  secrets: readonly string[];
}

/** `/admin/*` behind its own bearer token: the webhook key never opens it (contract section 6). */
export function adminRoutes({ store, adminToken, secrets }: AdminDeps): Hono {
  const reply = (value: unknown) =>
    new Response(maskSecrets(JSON.stringify(value), secrets), { headers: { 'content-type': 'application/json' } });

  return new Hono()
    .use(requireBearer([adminToken], 'admin'))
    .get('/calls', async (c) => {
      const limit = Math.min(Math.max(Number(c.req.query('limit') ?? 50) || 50, 1), 500);
      const calls = await store.listCalls({ hook: c.req.query('hook'), after: c.req.query('after'), limit });
      const last = calls.at(-1);
      return reply({ calls, next: calls.length === limit && last ? last.record.id : null });
    })
    .get('/calls/:id', async (c) => {
      const call = await store.getCall(c.req.param('id'));
      if (!call) throw new CallhookError('NOT_FOUND', `no call with id ${c.req.param('id')}`);
      return reply(call);
    });
}
