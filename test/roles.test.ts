import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { adminOperations } from '../src/admin/operations.js';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { buildIntake } from '../src/intake/intake.js';
import { compileHooks } from '../src/intake/pipeline.js';
import { routeRoles } from '../src/operators/guard.js';
import { type Actor, ADMIN_TOKEN_ACTOR, allows, type Role } from '../src/operators/roles.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { ADMIN, KEY, sampleCall } from './helpers/server.js';
import { deadDeliveryIncident } from './helpers/store-inputs.js';

/**
 * docs/reference.md#operators: every admin route names the role it needs, and each role gets exactly what it allows.
 * Table-driven over the real app's own list of routes, so a route added without a guard fails here, and a guard naming
 * the wrong role fails against the table below. For each role (a viewer's and an operator's personal tokens, the
 * admin token, an admin user's personal token) every route is requested on a world of its own: 403 exactly where the
 * role is below the route's, and a 403 changes nothing but the audit log, which keeps it as `forbidden`.
 */

/** Which role each admin route needs: what the reference documents, written out so a wrong guard is caught. */
const EXPECTED: Record<string, Role> = {
  'GET /admin/openapi.json': 'viewer',
  'GET /admin/calls': 'viewer',
  'GET /admin/calls/:id': 'viewer',
  'PATCH /admin/calls/:id': 'operator',
  'POST /admin/calls/:id/reviewed': 'operator',
  'POST /admin/calls/:id/redeliver': 'operator',
  'POST /admin/calls/:id/release': 'operator',
  'GET /admin/receipts': 'viewer',
  'GET /admin/receipts/:id': 'viewer',
  'POST /admin/receipts/:id/ingest': 'operator',
  'GET /admin/deliveries': 'viewer',
  'POST /admin/deliveries/retry': 'operator',
  'POST /admin/deliveries/:id/retry': 'operator',
  'GET /admin/sinks': 'viewer',
  'POST /admin/sinks/:name/pause': 'operator',
  'POST /admin/sinks/:name/resume': 'operator',
  'POST /admin/sinks/:name/redeliver': 'operator',
  'GET /admin/jobs/:id': 'viewer',
  'GET /admin/incidents': 'viewer',
  'GET /admin/incidents/:id': 'viewer',
  'POST /admin/incidents/:id/ack': 'operator',
  'GET /admin/people': 'viewer',
  'POST /admin/erase': 'admin',
  'GET /admin/erasures': 'viewer',
  'GET /admin/users': 'admin',
  'POST /admin/users': 'admin',
  'PATCH /admin/users/:email': 'admin',
  'DELETE /admin/users/:email': 'admin',
  'POST /admin/users/:email/reset': 'admin',
  'POST /admin/users/:email/tokens': 'admin',
  'DELETE /admin/tokens/:id': 'admin',
  'GET /admin/audit': 'admin',
};

const BY_ADMIN: Actor = { name: ADMIN_TOKEN_ACTOR, role: 'admin', via: 'admin-token', address: '127.0.0.1' };

/** A store with one of everything a route can act on, the app on it, and a bearer token for each kind of actor. */
async function world() {
  const store: Store = openSqliteStore({ path: ':memory:' });
  const config = loadConfig({ CALLHOOK_API_KEYS: KEY });
  config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, on_problem: 'hold', sinks: ['crm'] });
  const intake = buildIntake({ store, hooks: compileHooks(config) });
  const admin = adminOperations({
    store,
    intake,
    sinks: [{ name: 'crm', type: 'webhook', pausedByDefault: false }],
    notify: () => {},
    bodyLimitBytes: config.bodyLimit,
    adminTokenConfigured: true,
  });
  const app = createApp({
    log: pino({ level: 'silent' }),
    store,
    http: { bodyLimitBytes: config.bodyLimit },
    keys: { adminToken: ADMIN, secrets: [] },
    intake,
    admin,
    health: { workerRunning: () => true, accepting: () => true },
  });
  // A held call (a number that is none), a refused request, an incident.
  const received = await app.request('/webhooks/end-of-call', {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(sampleCall({ phone_number: 'no number' })),
  });
  const callId = ((await received.json()) as { id: string }).id;
  await app.request('/webhooks/end-of-call', {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/csv' },
    body: 'a,b',
  });
  const receiptId = (await admin.receipts.listReceipts({ outcome: 'rejected', limit: 1 })).receipts[0]!.id;
  const incident = await deadDeliveryIncident(store, 'crm');
  const tokenOf = async (email: string, role: Role) => {
    await admin.users.add(BY_ADMIN, { email, role }, 'http://localhost');
    return (await admin.users.addToken(BY_ADMIN, email, 'test')).token;
  };
  const tokens: Record<string, string> = {
    viewer: await tokenOf('vera@example.com', 'viewer'),
    operator: await tokenOf('otto@example.com', 'operator'),
    'admin token': ADMIN,
    'admin user': await tokenOf('ada@example.com', 'admin'),
  };
  // Someone for the user routes to act on.
  await tokenOf('sam@example.com', 'viewer');
  const samToken = (await admin.users.list()).find((u) => u.email === 'sam@example.com')!.tokens[0]!.id;

  /** The route's path with its parameters filled in with things that exist, and a body it takes. */
  const request = (method: string, path: string): { url: string; body?: unknown } => {
    const url = path
      .replace(/^\/admin\/calls\/:id/, `/admin/calls/${callId}`)
      .replace(/^\/admin\/receipts\/:id/, `/admin/receipts/${receiptId}`)
      .replace(/^\/admin\/deliveries\/:id/, '/admin/deliveries/1')
      .replace(':name', 'crm')
      .replace(/^\/admin\/jobs\/:id/, '/admin/jobs/none')
      .replace(/^\/admin\/incidents\/:id/, `/admin/incidents/${incident.id}`)
      .replace(':email', 'sam@example.com')
      .replace(/^\/admin\/tokens\/:id/, `/admin/tokens/${samToken}`);
    const bodies: Record<string, unknown> = {
      'PATCH /admin/calls/:id': { data: { first_name: 'Changed' } },
      'POST /admin/calls/:id/redeliver': {},
      'POST /admin/receipts/:id/ingest': { body: '{"first_name":"Asha"}', content_type: 'application/json' },
      'POST /admin/deliveries/retry': {},
      'POST /admin/sinks/:name/redeliver': { from: '2026-11-01' },
      'POST /admin/erase': { phone: '+91 98123 45678' },
      'POST /admin/users': { email: 'new@example.com', role: 'viewer' },
      'PATCH /admin/users/:email': { role: 'operator' },
      'POST /admin/users/:email/tokens': { name: 'more' },
    };
    const query: Record<string, string> = {
      'GET /admin/people': '?phone=%2B919812345678',
      'GET /admin/erasures': '?phone=%2B919812345678',
    };
    const key = `${method} ${path}`;
    return { url: url + (query[key] ?? ''), body: bodies[key] };
  };

  /** Everything a route could change, but the audit log and a token's last use. */
  const state = async () =>
    JSON.stringify({
      call: await admin.calls.showCall(callId),
      calls: await admin.calls.listCalls({ limit: 100, testCalls: true }),
      receipt: await admin.receipts.showReceipt(receiptId),
      deliveries: await admin.deliveries.listDeliveries({ limit: 100 }),
      sinks: (await admin.sinks.listSinks()).map((s) => [s.name, s.paused, s.paused_changed_at]),
      incident: await admin.incidents.get(incident.id),
      users: (await admin.users.list()).map((u) => ({ ...u, tokens: u.tokens.map((t) => [t.id, t.name]) })),
    });

  const send = (method: string, path: string, token: string) => {
    const { url, body } = request(method, path);
    return app.request(url, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  };
  const close = async () => {
    await admin.redeliveries.stop();
    await store.close();
  };
  return { app, store, admin, tokens, request, state, send, close };
}

const worlds: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});
const newWorld = async () => {
  const w = await world();
  worlds.push(w);
  return w;
};

describe('roles on the admin routes', () => {
  it('names a role on every admin route, the one the reference gives it', async () => {
    const { app } = await newWorld();
    const admin = routeRoles(app.routes).filter((r) => r.path.startsWith('/admin'));
    expect(admin.length).toBeGreaterThan(30);
    const unguarded = admin.filter((r) => r.role === undefined).map((r) => `${r.method} ${r.path}`);
    expect(unguarded, 'routes with no role').toEqual([]);
    expect(Object.fromEntries(admin.map((r) => [`${r.method} ${r.path}`, r.role]))).toEqual(EXPECTED);
  });

  const ROLE_OF: Record<string, Role> = {
    viewer: 'viewer',
    operator: 'operator',
    'admin token': 'admin',
    'admin user': 'admin',
  };

  it.each(Object.keys(ROLE_OF))(
    'answers the %s 403 exactly where the route needs more, and a 403 changes nothing',
    async (who) => {
      const { app } = await newWorld();
      const routes = routeRoles(app.routes).filter((r) => r.path.startsWith('/admin'));
      for (const { method, path, role } of routes) {
        const w = await newWorld();
        const before = await w.state();
        const res = await w.send(method, path, w.tokens[who]!);
        const route = `${who}: ${method} ${path} (${role})`;
        if (allows(ROLE_OF[who]!, role!)) {
          expect(res.status, route).not.toBe(403);
          expect([401, 429], route).not.toContain(res.status);
          expect(res.status, `${route}: ${await res.clone().text()}`).toBeLessThan(500);
          continue;
        }
        expect(res.status, route).toBe(403);
        expect(await res.json(), route).toEqual({
          error: 403,
          message: `Your role does not allow this: this needs the ${role} role; you are ${ROLE_OF[who]}`,
        });
        expect(await w.state(), route).toBe(before);
        const [entry] = await w.store.listAudit({ action: 'forbidden' });
        expect(entry, route).toMatchObject({
          actor: `${who === 'viewer' ? 'vera' : 'otto'}@example.com`,
          action: 'forbidden',
          target: `${method} ${w.request(method, path).url.split('?')[0]}`,
          outcome: 'FORBIDDEN',
        });
      }
    },
  );
});
