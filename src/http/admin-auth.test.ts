import { Hono } from 'hono';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userOperations } from '../admin/users.js';
import { createAuditLog } from '../operators/audit.js';
import type { ActorEnv } from '../operators/guard.js';
import { type Actor, ADMIN_TOKEN_ACTOR } from '../operators/roles.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { adminAuth, TOUCH_EVERY_MS } from './admin-auth.js';
import { createAuthLimiter } from './auth-limit.js';

/** Who is asking the admin API (docs/reference.md#operators), on a real store. */

const ADMIN = 'admin-token-0123456789abcdef';
const BY: Actor = { name: ADMIN_TOKEN_ACTOR, role: 'admin', via: 'admin-token', address: '127.0.0.1' };

let store: Store;
let clock: number;
let app: Hono<ActorEnv>;
let token: string;

beforeEach(async () => {
  store = openSqliteStore({ path: ':memory:' });
  clock = Date.parse('2026-11-27T09:00:00.000Z');
  const users = userOperations({
    store,
    audit: createAuditLog({ store, log: pino({ level: 'silent' }) }),
    adminTokenConfigured: true,
  });
  await users.add(BY, { email: 'ana@example.com', role: 'operator' }, 'http://localhost');
  token = (await users.addToken(BY, 'ana@example.com', 'laptop')).token;
  app = new Hono<ActorEnv>()
    .use(
      adminAuth({
        adminToken: ADMIN,
        tokens: store,
        limiter: createAuthLimiter({ max: 2 }),
        now: () => new Date(clock),
      }),
    )
    .get('/who', (c) => c.json(c.get('actor')));
});
afterEach(() => store.close());

const ask = (bearer: string) => app.request('/who', { headers: { authorization: `Bearer ${bearer}` } });
const lastUsed = async () => (await store.listTokens())[0]!.lastUsedAt;

describe('adminAuth', () => {
  it('makes the admin token an admin named admin-token, and a personal token its user with their role as it is now', async () => {
    expect(await (await ask(ADMIN)).json()).toMatchObject({ name: 'admin-token', role: 'admin', via: 'admin-token' });
    expect(await (await ask(token)).json()).toMatchObject({ name: 'ana@example.com', role: 'operator', via: 'token' });
    const user = await store.findUser('ana@example.com');
    await store.setRole(user!.id, 'viewer', new Date().toISOString(), false);
    expect(await (await ask(token)).json()).toMatchObject({ role: 'viewer' });
  });

  it("writes a token's last use at most once a minute", async () => {
    expect(await lastUsed()).toBeNull();
    await ask(token);
    const first = await lastUsed();
    expect(first).toBe('2026-11-27T09:00:00.000Z');
    clock += TOUCH_EVERY_MS - 1;
    await ask(token);
    expect(await lastUsed()).toBe(first);
    clock += 1;
    await ask(token);
    expect(await lastUsed()).toBe('2026-11-27T09:01:00.000Z');
  });

  it('refuses a revoked token at once, and counts wrong tokens on the limiter, never a valid one', async () => {
    const { id } = (await store.listTokens())[0]!;
    await store.revokeToken(id);
    expect((await ask(token)).status).toBe(401);
    expect((await ask('chk_not-a-token')).status).toBe(401);
    expect((await ask(token)).status).toBe(429);
    expect((await ask(ADMIN)).status).toBe(200);
  });
});
