import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthLimiter } from '../src/http/auth-limit.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { appOn } from './helpers/app.js';
import { ADMIN } from './helpers/server.js';

/**
 * People on the dashboard (docs/reference.md#operators, docs/dashboard.md#users): an admin adds a colleague on
 * /ui/users, the one-time link sets their password once (a second use, or the link after, says it was used: 410), and
 * the secret in its path never reaches the request log; signing in with a password is counted by the auth limiter,
 * which refuses even the right password while the address is over the limit but never the admin token; every sign-in
 * is kept in the audit log, a flood of refusals once.
 */

const ORIGIN = 'http://dash.test';
const PASSWORD = 'a password of some length';

let store: Store;
let app: ReturnType<typeof appOn>;
const logged: string[] = [];

beforeAll(() => {
  store = openSqliteStore({ path: ':memory:' });
  const lines = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  app = appOn(store, {
    log: pino({ level: 'info' }, lines),
    http: { limiter: createAuthLimiter({ max: 3, windowMs: 60_000 }), timezone: 'Asia/Kolkata' },
  });
});
afterAll(() => store?.close());

function request(
  method: string,
  path: string,
  { cookie, form }: { cookie?: string; form?: Record<string, string> } = {},
) {
  return app.request(`${ORIGIN}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(cookie && { cookie }),
      ...(form && { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }),
    },
    body: form && new URLSearchParams(form).toString(),
  });
}
const cookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;
/** The value of the read-only field that shows a new link or token once. */
const shownOnce = (html: string) => /id="shown-secret" readonly="" value="([^"]+)"/.exec(html)?.[1];

describe('users on the dashboard', () => {
  let admin: string;
  let link: string;

  it('adds a user as an admin and shows their one-time link once', async () => {
    admin = cookieOf(await request('POST', '/ui/login', { form: { token: ADMIN } }));
    const added = await request('POST', '/ui/users', {
      cookie: admin,
      form: { email: ' Ravi@Example.com ', role: 'operator' },
    });
    expect(added.status).toBe(200);
    const html = await added.text();
    link = shownOnce(html)!;
    expect(link).toMatch(new RegExp(`^${ORIGIN}/ui/password/[A-Za-z0-9_-]{43}$`));
    // Listed with the address as kept (trimmed, lower-cased), no password yet, and never the link again.
    const list = await (await request('GET', '/ui/users', { cookie: admin })).text();
    expect(list).toContain('ravi@example.com');
    expect(list).toContain('not yet');
    expect(list).not.toContain(link.split('/').at(-1));
  });

  it('refuses an unknown role and an address that cannot be one, on the page, adding nobody', async () => {
    for (const form of [
      { email: 'meera@example.com', role: 'superuser' },
      { email: 'not an address', role: 'viewer' },
    ]) {
      const res = await request('POST', '/ui/users', { cookie: admin, form });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('role="alert"');
    }
    expect((await store.listUsers()).map((u) => u.email)).toEqual(['ravi@example.com']);
  });

  it('sets the password through the link once: a short one is refused, a second use is a 410 page', async () => {
    const path = new URL(link).pathname;
    const form = await request('GET', path);
    expect(form.status).toBe(200);
    const page = await form.text();
    expect(page).toContain('ravi@example.com');
    expect(page).toContain('<label for="password">New password</label>');

    const short = await request('POST', path, { form: { password: 'too short', again: 'too short' } });
    expect(short.status).toBe(400);
    expect(await short.text()).toContain('at least 12 characters');
    const differ = await request('POST', path, { form: { password: PASSWORD, again: `${PASSWORD}!` } });
    expect(differ.status).toBe(400);

    const set = await request('POST', path, { form: { password: PASSWORD, again: PASSWORD } });
    expect(set.status).toBe(303);
    expect(set.headers.get('location')).toBe('/ui/login?password=set');
    // It signs nobody in.
    expect(set.headers.get('set-cookie')).toBeNull();

    for (const method of ['POST', 'GET']) {
      const again = await request(
        method,
        path,
        method === 'POST' ? { form: { password: PASSWORD, again: PASSWORD } } : {},
      );
      expect(again.status).toBe(410);
      const html = await again.text();
      expect(html).toContain('This link was used already');
      expect(html).toContain('Ask an admin to reset your password');
    }
    expect((await request('GET', '/ui/password/not-a-link-anyone-made')).status).toBe(404);

    const signedIn = await request('POST', '/ui/login', { form: { email: 'ravi@example.com', password: PASSWORD } });
    expect(signedIn.status).toBe(303);
    const overview = await (await request('GET', '/ui', { cookie: cookieOf(signedIn) })).text();
    expect(overview).toContain('ravi@example.com <span class="muted">(operator)</span>');
  });

  it("logs the link's path without its secret", () => {
    const secret = link.split('/').at(-1)!;
    const lines = logged.join('');
    expect(lines).toContain('"path":"/ui/password/…"');
    expect(lines).not.toContain(secret);
  });

  it('makes a token shown once, lists it by name, and revokes it', async () => {
    const made = await request('POST', '/ui/users/ravi%40example.com/tokens', {
      cookie: admin,
      form: { name: 'laptop' },
    });
    expect(made.status).toBe(200);
    const token = shownOnce(await made.text())!;
    expect(token).toMatch(/^chk_/);
    const list = await (await request('GET', '/ui/users', { cookie: admin })).text();
    expect(list).toContain('<strong>laptop</strong>');
    expect(list).not.toContain(token);
    const [info] = await store.listTokens();
    const revoked = await request('POST', `/ui/users/tokens/${info!.id}/revoke`, { cookie: admin, form: {} });
    expect(revoked.status).toBe(303);
    expect(await store.listTokens()).toEqual([]);
  });

  it('asks before removing a user, on a page of its own', async () => {
    const ask = await request('GET', '/ui/users/ravi%40example.com/remove', { cookie: admin });
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('<h1>Remove ravi@example.com?</h1>');
    expect((await store.listUsers()).length).toBe(1);
  });
});

describe('signing in with a password', () => {
  it('counts wrong passwords, then refuses even the right one with 429 but never the admin token', async () => {
    const wrong = await request('POST', '/ui/login', {
      form: { email: 'ravi@example.com', password: 'not the password' },
    });
    expect(wrong.status).toBe(401);
    const html = await wrong.text();
    expect(html).toContain('That email and password do not match a user.');
    // The address given comes back in the form; the password never does.
    expect(html).toContain('value="ravi@example.com"');
    expect(html).not.toContain('not the password');
    // Nobody of that address: refused alike.
    expect(
      (await request('POST', '/ui/login', { form: { email: 'nobody@example.com', password: PASSWORD } })).status,
    ).toBe(401);
    expect(
      (await request('POST', '/ui/login', { form: { email: 'ravi@example.com', password: 'wrong again!' } })).status,
    ).toBe(401);

    // Three failures: the limit. The right password is refused now too, and kept in the log once.
    for (let i = 0; i < 3; i++) {
      const limited = await request('POST', '/ui/login', { form: { email: 'ravi@example.com', password: PASSWORD } });
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    const token = await request('POST', '/ui/login', { form: { token: ADMIN } });
    expect(token.status).toBe(303);

    const signIns = (await store.listAudit({ action: 'sign-in', limit: 100 })).map((e) => [e.actor, e.outcome]);
    expect(signIns.slice(0, 6)).toEqual([
      ['admin-token', 'ok'],
      ['ravi@example.com', 'TOO_MANY_FAILURES'],
      ['ravi@example.com', 'UNAUTHORIZED'],
      ['nobody@example.com', 'UNAUTHORIZED'],
      ['ravi@example.com', 'UNAUTHORIZED'],
      ['ravi@example.com', 'ok'],
    ]);
    // Nothing secret in any entry: no password, token or hash.
    const all = JSON.stringify(await store.listAudit({ limit: 1000 }));
    for (const secret of [PASSWORD, 'not the password', 'wrong again!', ADMIN, 'scrypt$'])
      expect(all).not.toContain(secret);
  });
});

describe('the audit log on the dashboard', () => {
  it('lists newest first, 50 a page, filtered by who and action, a bad filter said on the page', async () => {
    const admin = cookieOf(await request('POST', '/ui/login', { form: { token: ADMIN } }));
    const at = (i: number) => new Date(Date.parse('2026-11-20T10:00:00Z') + i * 60_000).toISOString();
    await store.appendAudit(
      Array.from({ length: 60 }, (_, i) => ({
        at: at(i),
        actor: 'bulk@example.com',
        address: '10.0.0.7',
        action: i % 2 === 0 ? 'sink.pause' : 'sink.resume',
        target: `sink-${i}`,
        outcome: 'ok',
        details: null,
      })),
    );
    const rows = (html: string) => [...html.matchAll(/<td data-label="Target">([^<]*)<\/td>/g)].map((m) => m[1]);
    const first = await request('GET', '/ui/audit?actor=bulk%40example.com', { cookie: admin });
    expect(first.status).toBe(200);
    const page = await first.text();
    expect(rows(page)).toEqual(Array.from({ length: 50 }, (_, i) => `sink-${59 - i}`));
    const older = /<a href="([^"]+)">Older<\/a>/.exec(page)?.[1]?.replaceAll('&amp;', '&');
    expect(older).toMatch(/^\/ui\/audit\?actor=bulk%40example.com&before=\d+$/);
    const second = await (await request('GET', older!, { cookie: admin })).text();
    expect(rows(second)).toEqual(Array.from({ length: 10 }, (_, i) => `sink-${9 - i}`));
    expect(second).not.toContain('>Older</a>');

    const paused = await (
      await request('GET', '/ui/audit?actor=bulk%40example.com&action=sink.pause', { cookie: admin })
    ).text();
    expect(rows(paused)).toHaveLength(30);
    // Times in the configured zone: the newest, 10:59 UTC, is 16:29 in Kolkata.
    expect(page).toContain('20 Nov 2026, 16:29:00');
    // A day is the configured zone's: 20 Nov in Kolkata holds all sixty.
    const day = await (
      await request('GET', '/ui/audit?actor=bulk%40example.com&from=2026-11-20&to=2026-11-20', { cookie: admin })
    ).text();
    expect(rows(day)).toHaveLength(50);
    const later = await request('GET', '/ui/audit?actor=bulk%40example.com&from=2026-11-21', { cookie: admin });
    expect(await later.text()).toContain('No entry matches.');

    const bad = await request('GET', '/ui/audit?action=drop-table', { cookie: admin });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('Action is one of call.edit');
  });
});
