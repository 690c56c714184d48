import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, newSecret } from '../src/operators/credentials.js';
import { routeRoles } from '../src/operators/guard.js';
import { allows, type Role } from '../src/operators/roles.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { appOn } from './helpers/app.js';
import { ADMIN, KEY, sampleCall } from './helpers/server.js';

/**
 * Roles on the dashboard (docs/reference.md#operators), table-driven over the dashboard's own route list: every route
 * names its role (a new route without one fails here, not in production), the role is the one the design gives it,
 * and each kind of person (a viewer, an operator, an admin user, the admin token) is refused with a 403 page exactly
 * where their role falls short, a refused form changing nothing but the audit log's record of the attempt.
 */

const ORIGIN = 'http://dash.test';
const PASSWORD = 'correct horse battery staple';

/** What anyone may open, signed in or not. */
const PUBLIC = [
  'GET /ui/assets/style.css',
  'GET /ui/login',
  'POST /ui/login',
  'POST /ui/logout',
  'GET /ui/password/:secret',
  'POST /ui/password/:secret',
];
/** Pages that are an operator's form: the edit form, and the page that asks before a bulk retry. */
const OPERATOR_PAGES = ['GET /ui/calls/:id/edit', 'GET /ui/deliveries/retry'];

/** The role a route should name: users and audit are an admin's, other pages a viewer's, the rest an operator's. */
function expectedRole(method: string, path: string): Role {
  if (path.startsWith('/ui/users') || path.startsWith('/ui/audit')) return 'admin';
  if (method === 'GET' && !OPERATOR_PAGES.includes(`${method} ${path}`)) return 'viewer';
  return 'operator';
}

let store: Store;
let app: ReturnType<typeof appOn>;
let callId: string;
let deliveryId: number;
let receiptId: number;
let tokenId: string;
const cookies = new Map<string, string>();

async function request(method: string, path: string, cookie?: string, form: Record<string, string> = {}) {
  return app.request(`${ORIGIN}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(cookie && { cookie }),
      ...(method === 'POST' && { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: method === 'POST' ? new URLSearchParams(form).toString() : undefined,
  });
}

async function signIn(form: Record<string, string>): Promise<string> {
  const res = await request('POST', '/ui/login', undefined, form);
  expect(res.status, JSON.stringify(form.email ?? 'admin token')).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

/** Everything a form could change, but the audit log (a refusal is kept there). */
async function state(): Promise<string> {
  const calls = await store.listCalls({ limit: 100, order: 'desc' });
  return JSON.stringify({
    calls: calls.map((c) => [c.record.id, c.record.revision, c.status]),
    edits: await store.listEdits(callId),
    deliveries: (await store.listDeliveries({ limit: 100 })).map((d) => [d.id, d.state, d.attempts, d.nextAttemptAt]),
    receipts: (await store.listReceiptPage({ limit: 100 })).map((r) => [r.id, r.ingestedAs]),
    sinks: await store.sinkStates(),
    users: await store.listUsers(),
    tokens: await store.listTokens(),
    incidents: await store.listIncidents({ limit: 100 }),
  });
}

/** The path with each parameter filled with something that exists (or, for an incident, that does not). */
function filled(path: string): string {
  return path
    .replace('/calls/:id', `/calls/${callId}`)
    .replace('/deliveries/:id', `/deliveries/${deliveryId}`)
    .replace('/refused/:id', `/refused/${receiptId}`)
    .replace('/incidents/:id', '/incidents/no-such-incident')
    .replace('/sinks/:name', '/sinks/crm')
    .replace('/users/tokens/:id', `/users/tokens/${tokenId}`)
    .replace('/users/:email', `/users/${encodeURIComponent('victim@example.com')}`);
}

/** What each form sends; an empty form where it needs nothing. */
const FORMS: Record<string, Record<string, string>> = {
  'POST /ui/users': { email: 'added@example.com', role: 'viewer' },
  'POST /ui/users/:email/role': { role: 'operator' },
  'POST /ui/users/:email/tokens': { name: 'laptop' },
  'POST /ui/deliveries/retry': { state: 'dead' },
  'POST /ui/calls/:id/edit': { 'field.first_name': 'Asha Rani' },
  'POST /ui/refused/:id/ingest': { body: JSON.stringify(sampleCall()), content_type: 'application/json' },
};

beforeAll(async () => {
  store = openSqliteStore({ path: ':memory:' });
  app = appOn(store, {
    sinks: [{ name: 'crm', type: 'http', pausedByDefault: false }],
    log: pino({ level: 'silent' }),
  });
  const webhook = (body: string) =>
    app.request('/webhooks/end-of-call', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body,
    });
  callId = ((await (await webhook(JSON.stringify(sampleCall()))).json()) as { id: string }).id;
  expect((await webhook('{"first_name": "Ravi", ')).status).toBe(400);
  deliveryId = (await store.listDeliveries({ limit: 1 }))[0]!.id;
  receiptId = (await store.listReceiptPage({ outcome: 'rejected', limit: 1 }))[0]!.id;

  const at = new Date().toISOString();
  const passwordHash = await hashPassword(PASSWORD);
  for (const [email, role] of [
    ['viewer@example.com', 'viewer'],
    ['operator@example.com', 'operator'],
    ['admin@example.com', 'admin'],
    ['victim@example.com', 'viewer'],
  ] as const)
    await store.addUser({ id: `id-${role}-${email}`, email, role, passwordHash, at });
  tokenId = 'victim-token';
  await store.addToken({
    id: tokenId,
    userId: 'id-viewer-victim@example.com',
    name: 'old',
    digest: newSecret().digest,
    at,
  });

  for (const role of ['viewer', 'operator', 'admin'])
    cookies.set(role, await signIn({ email: `${role}@example.com`, password: PASSWORD }));
  cookies.set('admin-token', await signIn({ token: ADMIN }));
});
afterAll(() => store?.close());

const PEOPLE: [who: string, role: Role][] = [
  ['viewer', 'viewer'],
  ['operator', 'operator'],
  ['admin', 'admin'],
  ['admin-token', 'admin'],
];

describe('roles on every page and form of the dashboard', () => {
  it('names a role on every route but the public ones, the role the design gives it', () => {
    const routes = routeRoles(app.routes).filter((r) => r.path.startsWith('/ui'));
    expect(routes.length).toBeGreaterThan(25);
    const named = routes.filter((r) => r.role === undefined).map((r) => `${r.method} ${r.path}`);
    expect(named.sort()).toEqual([...PUBLIC].sort());
    for (const route of routes.filter((r) => r.role !== undefined))
      expect(route.role, `${route.method} ${route.path}`).toBe(expectedRole(route.method, route.path));
  });

  it('refuses each person exactly where their role falls short, with a 403 page naming the role, changing nothing', async () => {
    const routes = routeRoles(app.routes).filter((r) => r.path.startsWith('/ui') && r.role !== undefined);
    // The refusals first, then what is allowed (which changes things: a user removed, a delivery retried).
    const cases = routes.flatMap((route) =>
      PEOPLE.map(([who, role]) => ({ route, who, allowed: allows(role, route.role!) })),
    );
    cases.sort((a, b) => Number(a.allowed) - Number(b.allowed));
    let refused = 0;
    for (const { route, who, allowed } of cases) {
      const name = `${route.method} ${route.path} as ${who}`;
      const before = route.method === 'POST' ? await state() : '';
      const audited = (await store.listAudit({ action: 'forbidden', limit: 1000 })).length;
      const res = await request(
        route.method,
        filled(route.path),
        cookies.get(who),
        FORMS[`${route.method} ${route.path}`],
      );
      if (allowed) {
        expect(res.status, name).not.toBe(403);
        expect([200, 303, 400, 404, 409], name).toContain(res.status);
        continue;
      }
      refused++;
      expect(res.status, name).toBe(403);
      const html = await res.text();
      expect(html, name).toContain('<h1>Not allowed</h1>');
      expect(html, name).toContain(`this needs the ${route.role} role`);
      // In the dashboard's layout, with who is signed in.
      expect(html, name).toContain('Sign out');
      if (route.method === 'POST') expect(await state(), name).toBe(before);
      const kept = await store.listAudit({ action: 'forbidden', limit: 1000 });
      expect(kept.length, name).toBe(audited + 1);
      expect(kept[0], name).toMatchObject({
        actor: who === 'admin-token' ? 'admin-token' : `${who}@example.com`,
        target: `${route.method} ${filled(route.path)}`,
        outcome: 'FORBIDDEN',
      });
    }
    // A viewer is refused every form and the admin's pages; an operator the admin's.
    expect(refused).toBeGreaterThan(20);
  });

  it('shows a viewer no form that acts, and only an admin the users and the audit log in the menu', async () => {
    const page = async (who: string, path: string) => (await request('GET', path, cookies.get(who))).text();
    const viewerCall = await page('viewer', `/ui/calls/${callId}`);
    expect(viewerCall).toContain('viewer@example.com');
    expect(viewerCall).toContain('(viewer)');
    expect(viewerCall).not.toMatch(/method="post" action="\/ui\/calls/);
    expect(viewerCall).not.toContain('Edit fields');
    expect(viewerCall).not.toContain('href="/ui/users"');
    // The operator's edit of the table above shows on the call's page with who made it.
    expect(viewerCall).toContain('<td data-label="By">operator@example.com</td>');
    expect(await page('operator', `/ui/calls/${callId}`)).toContain('Edit fields');
    expect(await page('operator', '/ui/sinks')).toContain('action="/ui/sinks/crm/pause"');
    expect(await page('viewer', '/ui/sinks')).not.toContain('action="/ui/sinks/crm/pause"');
    expect(await page('viewer', '/ui/refused')).not.toContain('/ingest"');
    expect(await page('operator', '/ui')).not.toContain('href="/ui/audit"');
    for (const who of ['admin', 'admin-token']) {
      const overview = await page(who, '/ui');
      expect(overview).toContain('href="/ui/users"');
      expect(overview).toContain('href="/ui/audit"');
    }
  });
});
