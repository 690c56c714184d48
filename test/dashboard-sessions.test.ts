import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../src/operators/credentials.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { freshDatabase } from './helpers/database.js';
import { ADMIN, startServer, type TestServer, tempDir } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * Dashboard sessions kept in the store (docs/reference.md#dashboard), across two replicas of serve on one PostgreSQL,
 * as behind a load balancer: a session begun on one is a session on the other, and whatever ends it on one (a
 * sign-out, a changed role, a reset password, a removed user, all done through the dashboard) ends it on the other at
 * the very next request, with no wait and no cache to expire.
 */

const url = serviceUrl('postgres');
const PASSWORD = 'correct horse battery staple';

describe.skipIf(!url)('dashboard sessions across replicas sharing PostgreSQL', () => {
  let db: { url: string; drop(): Promise<void> };
  let replicas: TestServer[] = [];
  let store: Store;

  beforeAll(async () => {
    db = await freshDatabase(url!, 'callhook_sessions');
    replicas = await Promise.all([0, 1].map(() => startServer({ env: { DATABASE_URL: db.url } })));
    // The test's own connection to the same database, to add the users as `callhook users add` would.
    store = await openStore({ databaseUrl: db.url, dataDir: tempDir() });
    const at = new Date().toISOString();
    const passwordHash = await hashPassword(PASSWORD);
    for (const [email, role] of [
      ['ann@example.com', 'operator'],
      ['bob@example.com', 'operator'],
      ['cat@example.com', 'viewer'],
      ['dan@example.com', 'viewer'],
    ] as const)
      await store.addUser({ id: `id-${email}`, email, role, passwordHash, at });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await Promise.all(replicas.map((r) => r.close()));
    await db?.drop();
  });

  const a = () => replicas[0]!;
  const b = () => replicas[1]!;

  async function post(server: TestServer, path: string, form: Record<string, string>, cookie?: string) {
    return fetch(`${server.url}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        origin: server.url,
        'content-type': 'application/x-www-form-urlencoded',
        ...(cookie && { cookie }),
      },
      body: new URLSearchParams(form).toString(),
    });
  }
  async function signIn(server: TestServer, form: Record<string, string>): Promise<string> {
    const res = await post(server, '/ui/login', form);
    expect(res.status).toBe(303);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }
  /** The page's status: 200 for a live session, 303 (to the sign-in) for none. */
  const open = async (server: TestServer, cookie: string, path = '/ui/calls') =>
    (await fetch(`${server.url}${path}`, { redirect: 'manual', headers: { cookie } })).status;

  it('takes a session begun on one replica on the other, and ends it on both at a sign-out on either', async () => {
    const ann = await signIn(a(), { email: 'ann@example.com', password: PASSWORD });
    expect(await open(b(), ann)).toBe(200);
    expect((await post(b(), '/ui/logout', {}, ann)).status).toBe(303);
    expect(await open(a(), ann)).toBe(303);
    expect(await open(b(), ann)).toBe(303);
    const kept = await store.listAudit({ actor: 'ann@example.com', limit: 10 });
    expect(kept.map((e) => [e.action, e.outcome])).toEqual([
      ['sign-out', 'ok'],
      ['sign-in', 'ok'],
    ]);
  });

  it("ends a user's sessions on the other replica at once when an admin changes their role, resets or removes them", async () => {
    const admin = await signIn(a(), { token: ADMIN });
    const bob = await signIn(b(), { email: 'bob@example.com', password: PASSWORD });
    const cat = await signIn(b(), { email: 'cat@example.com', password: PASSWORD });
    const dan = await signIn(b(), { email: 'dan@example.com', password: PASSWORD });
    for (const cookie of [bob, cat, dan]) expect(await open(b(), cookie)).toBe(200);

    expect((await post(a(), '/ui/users/bob%40example.com/role', { role: 'viewer' }, admin)).status).toBe(303);
    expect(await open(b(), bob)).toBe(303);
    // Signed in again, bob has the new role: the operator's forms are refused him.
    const bobAgain = await signIn(b(), { email: 'bob@example.com', password: PASSWORD });
    expect(await open(b(), bobAgain, `/ui/deliveries/retry`)).toBe(403);

    expect((await post(a(), '/ui/users/cat%40example.com/remove', {}, admin)).status).toBe(303);
    expect(await open(b(), cat)).toBe(303);
    expect((await post(b(), '/ui/login', { email: 'cat@example.com', password: PASSWORD })).status).toBe(401);

    expect((await post(a(), '/ui/users/dan%40example.com/reset', {}, admin)).status).toBe(200);
    expect(await open(b(), dan)).toBe(303);
    // The reset cleared the password: the old one opens nothing until the new link is used.
    expect((await post(b(), '/ui/login', { email: 'dan@example.com', password: PASSWORD })).status).toBe(401);

    // Untouched, the admin token's session lives on both.
    expect(await open(b(), admin)).toBe(200);
  });
});
