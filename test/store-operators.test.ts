import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { newSecret } from '../src/operators/credentials.js';
import type { Role } from '../src/operators/roles.js';
import type { AuditInput, NewSession } from '../src/store/operators.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { serviceUrl } from './helpers/services.js';
import { unique } from './helpers/store-inputs.js';

/**
 * What every Store keeps of the people who run callhook (docs/reference.md#operators), run against each
 * implementation: users and their roles, the last admin user kept while one must remain, one-time links used once,
 * personal tokens with their user's role as it is now, dashboard sessions ended at once for every instance (two
 * instances stand for two replicas), and the audit log, appended, read newest first under each filter, aged out.
 */

interface OperatorsPeek {
  /** Tries to change an audit entry behind callhook's back, as another program on the store would. */
  updateAudit(id: number): Promise<void>;
}

interface Opened {
  /** A store on the database every test of the suite shares (each works under names of its own). */
  open(): Promise<Store>;
  /**
   * A store on a database of its own, for what counts every row (admin users, the audit log), and a way to open another
   * instance on it.
   */
  fresh(): Promise<{ store: Store; peek: OperatorsPeek; another(): Promise<Store> }>;
}

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const email = () => `${unique('op')}@example.in`;
/** A scrypt hash's shape: the store keeps whatever it is given and never checks one. */
const HASH = 'scrypt$32768$8$1$c2FsdA$aGFzaA';

function operatorsContract(name: string, { open, fresh }: Opened): void {
  describe(`${name} store operators contract`, () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      a = await open();
      b = await open();
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    const addUser = async (store: Store, role: Role = 'viewer', passwordHash: string | null = HASH) => {
      const user = { id: newId(), email: email(), role, passwordHash, at: iso(Date.now()) };
      expect(await store.addUser(user)).toBe(true);
      return user;
    };
    const session = (userId: string | null, expiresAt = iso(Date.now() + HOUR), at = iso(Date.now())) => {
      const { secret, digest } = newSecret();
      const kept: NewSession = { digest, userId, keyDigest: null, at, expiresAt };
      return { secret, kept };
    };
    const addSession = async (store: Store, userId: string | null) => {
      const { kept } = session(userId);
      await store.addSession(kept);
      return kept.digest;
    };
    const live = async (store: Store, digest: string) => store.findSession(digest, iso(Date.now()));

    it('adds users, finds one by address with its password hash, lists them oldest first, and refuses an address twice', async () => {
      const first = await addUser(a, 'admin');
      const second = await addUser(b, 'viewer', null);
      expect(await b.findUser(first.email)).toEqual({
        id: first.id,
        email: first.email,
        role: 'admin',
        createdAt: first.at,
        updatedAt: first.at,
        hasPassword: true,
        passwordHash: HASH,
      });
      expect(await a.findUser(second.email)).toMatchObject({ hasPassword: false, passwordHash: null });
      expect(await a.findUser(email())).toBeUndefined();
      const listed = (await a.listUsers()).filter((u) => [first.id, second.id].includes(u.id));
      expect(listed.map((u) => [u.email, u.role, u.hasPassword])).toEqual([
        [first.email, 'admin', true],
        [second.email, 'viewer', false],
      ]);
      expect(listed[0]).not.toHaveProperty('passwordHash');

      // The same address again, whatever else differs: refused, the user kept as they were.
      expect(await b.addUser({ ...first, id: newId(), role: 'viewer', passwordHash: null })).toBe(false);
      expect(await a.findUser(first.email)).toMatchObject({ id: first.id, role: 'admin', passwordHash: HASH });
      expect((await a.listUsers()).filter((u) => u.email === first.email)).toHaveLength(1);
    });

    it("gives a user a new role and ends their sessions, others' left alive", async () => {
      const user = await addUser(a, 'viewer');
      const other = await addUser(a, 'viewer');
      const mine = [await addSession(a, user.id), await addSession(b, user.id)];
      const theirs = await addSession(a, other.id);
      const later = iso(Date.now() + 1000);
      expect(await b.setRole(user.id, 'operator', later, true)).toBe('done');
      expect(await a.findUser(user.email)).toMatchObject({ role: 'operator', updatedAt: later, createdAt: user.at });
      for (const digest of mine) {
        expect(await a.findSession(digest, iso(Date.now()))).toBeUndefined();
        expect(await b.findSession(digest, iso(Date.now()))).toBeUndefined();
      }
      expect((await live(a, theirs))?.user?.id).toBe(other.id);
      expect(await a.setRole(newId(), 'admin', later, true)).toBe('missing');
    });

    it('sets and clears a password, ending the sessions of that user', async () => {
      const user = await addUser(a, 'operator', null);
      const digest = await addSession(a, user.id);
      expect(await b.setPassword(user.id, HASH, iso(Date.now()))).toBe(true);
      expect(await a.findUser(user.email)).toMatchObject({ hasPassword: true, passwordHash: HASH });
      expect(await live(a, digest)).toBeUndefined();
      const again = await addSession(a, user.id);
      expect(await a.setPassword(user.id, null, iso(Date.now()))).toBe(true);
      expect(await b.findUser(user.email)).toMatchObject({ hasPassword: false, passwordHash: null });
      expect(await live(b, again)).toBeUndefined();
      expect(await a.setPassword(newId(), HASH, iso(Date.now()))).toBe(false);
    });

    it('removes a user with their tokens, sessions and links', async () => {
      const user = await addUser(a, 'operator');
      const digest = await addSession(a, user.id);
      const token = {
        id: newId(),
        userId: user.id,
        name: 'laptop',
        digest: newSecret('chk_').digest,
        at: iso(Date.now()),
      };
      await a.addToken(token);
      const link = newSecret();
      await a.addPasswordLink({
        digest: link.digest,
        userId: user.id,
        at: token.at,
        expiresAt: iso(Date.now() + HOUR),
      });
      expect(await a.findToken(token.digest)).toBeDefined();

      expect(await b.removeUser(user.id, true)).toBe('done');
      expect(await a.findUser(user.email)).toBeUndefined();
      expect((await a.listUsers()).map((u) => u.id)).not.toContain(user.id);
      expect(await a.findToken(token.digest)).toBeUndefined();
      expect(await a.listTokens(user.id)).toEqual([]);
      expect(await live(a, digest)).toBeUndefined();
      expect(await a.checkPasswordLink(link.digest, iso(Date.now()))).toEqual({ outcome: 'missing' });
      expect(await a.usePasswordLink(link.digest, HASH, iso(Date.now()))).toEqual({ outcome: 'missing' });
      expect(await a.removeUser(user.id, true)).toBe('missing');
    });

    it('keeps the last admin user while one must remain, changing nothing, and lets them go when not', async () => {
      const { store } = await fresh();
      try {
        const admin = await addUser(store, 'admin');
        const viewer = await addUser(store, 'viewer');
        const digest = await addSession(store, admin.id);
        const at = iso(Date.now() + 1000);

        expect(await store.setRole(admin.id, 'operator', at, true)).toBe('last-admin');
        expect(await store.removeUser(admin.id, true)).toBe('last-admin');
        expect(await store.findUser(admin.email)).toMatchObject({ role: 'admin', updatedAt: admin.at });
        expect((await live(store, digest))?.user?.role).toBe('admin');
        // Made admin again, or another user changed: not a loss of the last admin.
        expect(await store.setRole(admin.id, 'admin', at, true)).toBe('done');
        expect(await store.setRole(viewer.id, 'operator', at, true)).toBe('done');
        expect(await store.removeUser(viewer.id, true)).toBe('done');

        // With a second admin, either may go; the one left is the last.
        const second = await addUser(store, 'admin');
        expect(await store.setRole(admin.id, 'viewer', at, true)).toBe('done');
        expect(await store.removeUser(second.id, true)).toBe('last-admin');
        expect(await store.findUser(second.email)).toMatchObject({ role: 'admin' });

        // When the admin token stands in, the last admin user may be demoted and removed.
        expect(await store.setRole(second.id, 'operator', at, false)).toBe('done');
        expect(await store.setRole(second.id, 'admin', at, false)).toBe('done');
        expect(await store.removeUser(second.id, false)).toBe('done');
        expect((await store.listUsers()).map((u) => [u.email, u.role])).toEqual([[admin.email, 'viewer']]);
      } finally {
        await store.close();
      }
    });

    it('keeps one of the last two admin users when two instances take both away at the same time', async () => {
      const { store, another } = await fresh();
      const other = await another();
      try {
        for (let round = 0; round < 5; round++) {
          const first = await addUser(store, 'admin');
          const second = await addUser(store, 'admin');
          const outcomes = await Promise.all([
            store.setRole(first.id, 'viewer', iso(Date.now()), true),
            other.removeUser(second.id, true),
          ]);
          expect(outcomes.sort()).toEqual(['done', 'last-admin']);
          const admins = (await store.listUsers()).filter((u) => u.role === 'admin');
          expect(admins).toHaveLength(1);
          // The one left goes the way of the other, the admin token standing in, for the next round.
          expect(await store.removeUser(admins[0]!.id, false)).toBe('done');
        }
      } finally {
        await store.close();
        await other.close();
      }
    });

    it("retires a user's unused links when their password is set or cleared, so only the newest link of a reset works", async () => {
      const user = await addUser(a, 'viewer', null);
      const bystander = await addUser(a, 'viewer', null);
      const now = Date.now();
      const link = async (userId: string) => {
        const made = newSecret();
        await a.addPasswordLink({ digest: made.digest, userId, at: iso(now), expiresAt: iso(now + 24 * HOUR) });
        return made.digest;
      };
      const first = await link(user.id);
      const second = await link(user.id);
      const theirs = await link(bystander.id);
      // A reset: the password cleared, then a new link made.
      expect(await b.setPassword(user.id, null, iso(now + 1000))).toBe(true);
      const third = await link(user.id);
      expect(await b.checkPasswordLink(first, iso(now + 2000))).toEqual({ outcome: 'used' });
      expect(await b.checkPasswordLink(second, iso(now + 2000))).toEqual({ outcome: 'used' });
      expect(await b.usePasswordLink(second, HASH, iso(now + 2000))).toEqual({ outcome: 'used' });
      expect(await b.checkPasswordLink(theirs, iso(now + 2000))).toMatchObject({ user: { id: bystander.id } });
      // Using the newest link retires any other the user still had.
      const fourth = await link(user.id);
      expect(await b.usePasswordLink(third, HASH, iso(now + 3000))).toMatchObject({ outcome: 'set' });
      expect(await b.checkPasswordLink(fourth, iso(now + 4000))).toEqual({ outcome: 'used' });
      expect(await b.checkPasswordLink(theirs, iso(now + 4000))).toMatchObject({ user: { id: bystander.id } });
    });

    it('sets a password through a one-time link once: a second use finds it used, a late one expired, an unknown one missing', async () => {
      const user = await addUser(a, 'viewer', null);
      const other = await addUser(a, 'viewer', null);
      const now = Date.now();
      const link = newSecret();
      await a.addPasswordLink({ digest: link.digest, userId: user.id, at: iso(now), expiresAt: iso(now + 24 * HOUR) });
      const checked = await b.checkPasswordLink(link.digest, iso(now));
      expect(checked).toEqual({
        user: expect.objectContaining({ id: user.id, email: user.email, hasPassword: false }),
      });
      const digest = await addSession(a, user.id);

      const used = await b.usePasswordLink(link.digest, HASH, iso(now + 1000));
      expect(used).toEqual({ outcome: 'set', user: expect.objectContaining({ id: user.id, hasPassword: true }) });
      expect(await a.findUser(user.email)).toMatchObject({ passwordHash: HASH, updatedAt: iso(now + 1000) });
      expect(await live(a, digest)).toBeUndefined();
      expect(await a.usePasswordLink(link.digest, 'scrypt$other', iso(now + 2000))).toEqual({ outcome: 'used' });
      expect(await b.checkPasswordLink(link.digest, iso(now + 2000))).toEqual({ outcome: 'used' });
      expect(await a.findUser(user.email)).toMatchObject({ passwordHash: HASH });

      const late = newSecret();
      await a.addPasswordLink({ digest: late.digest, userId: other.id, at: iso(now), expiresAt: iso(now + HOUR) });
      expect(await b.checkPasswordLink(late.digest, iso(now + HOUR))).toEqual({ outcome: 'expired' });
      expect(await b.usePasswordLink(late.digest, HASH, iso(now + 2 * HOUR))).toEqual({ outcome: 'expired' });
      expect(await a.findUser(other.email)).toMatchObject({ hasPassword: false });
      // Still usable the moment before it ends.
      expect(await a.usePasswordLink(late.digest, HASH, iso(now + HOUR - 1))).toMatchObject({ outcome: 'set' });

      const unknown = newSecret().digest;
      expect(await a.checkPasswordLink(unknown, iso(now))).toEqual({ outcome: 'missing' });
      expect(await a.usePasswordLink(unknown, HASH, iso(now))).toEqual({ outcome: 'missing' });
    });

    it('sets a password once when one link is used from two instances at the same time', async () => {
      for (let round = 0; round < 5; round++) {
        const user = await addUser(a, 'viewer', null);
        const link = newSecret();
        const at = iso(Date.now());
        await a.addPasswordLink({ digest: link.digest, userId: user.id, at, expiresAt: iso(Date.now() + HOUR) });
        const outcomes = await Promise.all([
          a.usePasswordLink(link.digest, `${HASH}a`, at),
          b.usePasswordLink(link.digest, `${HASH}b`, at),
        ]);
        expect(outcomes.map((o) => o.outcome).sort()).toEqual(['set', 'used']);
        const winner = outcomes[0]!.outcome === 'set' ? `${HASH}a` : `${HASH}b`;
        expect((await b.findUser(user.email))?.passwordHash).toBe(winner);
      }
    });

    it("finds a token with its user's role as it is now, records its use, and revokes it", async () => {
      const user = await addUser(a, 'viewer');
      const other = await addUser(a, 'admin');
      const at = iso(Date.now());
      const laptop = { id: newId(), userId: user.id, name: 'laptop', digest: newSecret('chk_').digest, at };
      const ci = {
        id: newId(),
        userId: user.id,
        name: 'ci',
        digest: newSecret('chk_').digest,
        at: iso(Date.now() + 1),
      };
      const theirs = { id: newId(), userId: other.id, name: 'cli', digest: newSecret('chk_').digest, at };
      for (const token of [laptop, ci, theirs]) await a.addToken(token);

      const info = (t: typeof laptop) => ({
        id: t.id,
        userId: t.userId,
        name: t.name,
        createdAt: t.at,
        lastUsedAt: null,
      });
      expect(await b.listTokens(user.id)).toEqual([info(laptop), info(ci)]);
      const every = (await b.listTokens()).filter((t) => [user.id, other.id].includes(t.userId));
      expect(every.map((t) => t.id).sort()).toEqual([laptop.id, ci.id, theirs.id].sort());

      expect(await b.findToken(laptop.digest)).toEqual({
        token: info(laptop),
        user: expect.objectContaining({ id: user.id, email: user.email, role: 'viewer' }),
      });
      expect(await b.findToken(newSecret('chk_').digest)).toBeUndefined();
      expect(await a.setRole(user.id, 'operator', iso(Date.now()), true)).toBe('done');
      expect((await b.findToken(laptop.digest))?.user.role).toBe('operator');

      const used = iso(Date.now() + 5000);
      await b.touchToken(laptop.id, used);
      expect((await a.findToken(laptop.digest))?.token.lastUsedAt).toBe(used);
      expect((await a.listTokens(user.id)).map((t) => t.lastUsedAt)).toEqual([used, null]);

      expect(await b.revokeToken(laptop.id)).toBe(true);
      expect(await a.findToken(laptop.digest)).toBeUndefined();
      expect(await a.revokeToken(laptop.id)).toBe(false);
      expect((await a.listTokens(user.id)).map((t) => t.id)).toEqual([ci.id]);
      expect(await a.findToken(theirs.digest)).toBeDefined();
    });

    it("keeps a session until it ends or expires, with the user as they are now, or none for the admin token's", async () => {
      const user = await addUser(a, 'operator');
      const now = Date.now();
      const { kept } = session(user.id, iso(now + 12 * HOUR), iso(now));
      await a.addSession(kept);
      expect(await b.findSession(kept.digest, iso(now))).toEqual({
        user: expect.objectContaining({ id: user.id, email: user.email, role: 'operator' }),
        keyDigest: null,
        expiresAt: iso(now + 12 * HOUR),
      });
      // Past its end it is not found, whatever the cookie says.
      expect(await b.findSession(kept.digest, iso(now + 12 * HOUR))).toBeUndefined();
      expect(await b.findSession(newSecret().digest, iso(now))).toBeUndefined();

      const key = newSecret().digest;
      const token = session(null);
      await b.addSession({ ...token.kept, keyDigest: key });
      expect(await a.findSession(token.kept.digest, iso(Date.now()))).toEqual({
        user: null,
        keyDigest: key,
        expiresAt: token.kept.expiresAt,
      });

      await a.endSession(kept.digest);
      expect(await b.findSession(kept.digest, iso(now))).toBeUndefined();
      await b.endSession(kept.digest); // ended twice: nothing to do
      expect(await a.findSession(token.kept.digest, iso(Date.now()))).toBeDefined();
    });

    it('deletes the expired sessions as new ones are added', async () => {
      const user = await addUser(a, 'viewer');
      const now = Date.now();
      const old = session(user.id, iso(now - 1000), iso(now - 2000));
      await a.addSession(old.kept);
      // Asked about a moment it was alive, it is still there until the next session is added.
      expect(await a.findSession(old.kept.digest, iso(now - 1500))).toBeDefined();
      await b.addSession(session(user.id, iso(now + HOUR), iso(now)).kept);
      expect(await a.findSession(old.kept.digest, iso(now - 1500))).toBeUndefined();
    });

    it('ends a session through one instance for every other at once', async () => {
      const user = await addUser(a, 'viewer');
      const digest = await addSession(a, user.id);
      expect((await live(b, digest))?.user?.id).toBe(user.id);
      await a.endSession(digest);
      expect(await live(b, digest)).toBeUndefined();

      const again = await addSession(b, user.id);
      expect((await live(a, again))?.user?.role).toBe('viewer');
      expect(await b.setRole(user.id, 'admin', iso(Date.now()), true)).toBe('done');
      expect(await live(a, again)).toBeUndefined();
      const third = await addSession(a, user.id);
      expect((await live(b, third))?.user?.role).toBe('admin');
      expect(await a.removeUser(user.id, false)).toBe('done');
      expect(await live(b, third)).toBeUndefined();
    });

    describe('audit log', () => {
      let store: Store;
      let peek: OperatorsPeek;
      beforeAll(async () => {
        ({ store, peek } = await fresh());
      });
      afterAll(async () => {
        await store?.close();
      });

      const T0 = Date.parse('2026-11-02T09:00:00.000Z');
      const entry = (minutes: number, overrides: Partial<AuditInput> = {}): AuditInput => ({
        at: iso(T0 + minutes * 60_000),
        actor: 'priya@example.in',
        address: '203.0.113.7',
        action: 'call.edit',
        target: 'call-1',
        outcome: 'ok',
        details: { fields: ['first_name', 'call_summary'] },
        ...overrides,
      });
      const day: AuditInput[] = [
        entry(0, { action: 'sign-in', target: null, details: null }),
        entry(5),
        entry(10, { actor: 'admin-token', address: null, action: 'sink.pause', target: 'crm', details: null }),
        entry(15, { action: 'deliveries.retry', target: null, details: { count: 12 } }),
        entry(20, {
          actor: 'ravi@example.in',
          action: 'sign-in',
          target: null,
          outcome: 'UNAUTHORIZED',
          details: null,
        }),
        entry(25, { actor: 'admin-token', action: 'user.add', target: 'ravi@example.in', details: { role: 'viewer' } }),
        entry(30, { action: 'call.edit', target: 'call-2' }),
        entry(35, { action: 'forbidden', target: 'POST /admin/erase', outcome: 'FORBIDDEN', details: null }),
      ];

      it('appends entries and lists them newest first, each as it was given', async () => {
        await store.appendAudit(day.slice(0, 3));
        await store.appendAudit(day.slice(3));
        await store.appendAudit([]);
        const listed = await store.listAudit({});
        expect(listed.map(({ id: _, ...rest }) => rest)).toEqual([...day].reverse());
        const ids = listed.map((e) => e.id);
        expect([...ids].sort((x, y) => y - x)).toEqual(ids);
        expect(new Set(ids).size).toBe(day.length);
      });

      it('lists by actor, action, target and time, each alone and together', async () => {
        const at = async (query: Parameters<Store['listAudit']>[0]) =>
          (await store.listAudit(query)).map((e) => (Date.parse(e.at) - T0) / 60_000);
        expect(await at({ actor: 'admin-token' })).toEqual([25, 10]);
        expect(await at({ action: 'sign-in' })).toEqual([20, 0]);
        expect(await at({ target: 'call-1' })).toEqual([5]);
        expect(await at({ target: 'ravi@example.in' })).toEqual([25]);
        // From inclusive, to exclusive.
        expect(await at({ from: iso(T0 + 10 * 60_000), to: iso(T0 + 25 * 60_000) })).toEqual([20, 15, 10]);
        expect(await at({ from: iso(T0 + 31 * 60_000) })).toEqual([35]);
        expect(await at({ to: iso(T0 + 5 * 60_000) })).toEqual([0]);
        expect(await at({ actor: 'priya@example.in', action: 'call.edit' })).toEqual([30, 5]);
        expect(await at({ actor: 'priya@example.in', action: 'call.edit', target: 'call-2' })).toEqual([30]);
        expect(await at({ actor: 'priya@example.in', from: iso(T0 + 6 * 60_000), to: iso(T0 + 31 * 60_000) })).toEqual([
          30, 15,
        ]);
        expect(await at({ actor: 'nobody@example.in' })).toEqual([]);
      });

      it('pages newest first with a limit and the last id as the next cursor, under a filter too', async () => {
        const pages: number[][] = [];
        let before: number | undefined;
        for (;;) {
          const page = await store.listAudit({ limit: 3, before });
          if (page.length === 0) break;
          pages.push(page.map((e) => (Date.parse(e.at) - T0) / 60_000));
          before = page.at(-1)!.id;
        }
        expect(pages).toEqual([
          [35, 30, 25],
          [20, 15, 10],
          [5, 0],
        ]);
        const first = await store.listAudit({ actor: 'priya@example.in', limit: 2 });
        expect(first.map((e) => e.action)).toEqual(['forbidden', 'call.edit']);
        const next = await store.listAudit({ actor: 'priya@example.in', limit: 2, before: first.at(-1)!.id });
        expect(next.map((e) => e.action)).toEqual(['deliveries.retry', 'call.edit']);
      });

      it('refuses a change to an entry made behind its back', async () => {
        const [newest] = await store.listAudit({ limit: 1 });
        await expect(peek.updateAudit(newest!.id)).rejects.toThrow(/audit log/);
        expect(await store.listAudit({ limit: 1 })).toEqual([newest]);
      });

      it('ages out the entries older than a time, oldest first, up to a limit a call, and newer ids go on from the last', async () => {
        const many = Array.from({ length: 30 }, (_, i) =>
          entry(-100 + i, { action: 'sign-in', actor: `old-${i}@example.in` }),
        );
        await store.appendAudit(many);
        const cutoff = iso(T0 + 12 * 60_000); // before the entries at 15 minutes and later
        expect(await store.expireAudit(cutoff, 20)).toBe(20);
        // The oldest went first: of the 30 old ones (appended last, so listed first), the last 10 are still there.
        const left = (await store.listAudit({ to: cutoff, limit: 100 })).map((e) => e.actor);
        expect(left).toEqual([
          ...Array.from({ length: 10 }, (_, i) => `old-${29 - i}@example.in`),
          'admin-token',
          'priya@example.in',
          'priya@example.in',
        ]);
        expect(await store.expireAudit(cutoff, 20)).toBe(13);
        expect(await store.expireAudit(cutoff, 20)).toBe(0);
        expect((await store.listAudit({ limit: 100 })).map((e) => (Date.parse(e.at) - T0) / 60_000)).toEqual([
          35, 30, 25, 20, 15,
        ]);
        // Emptied, the log still gives larger ids to newer entries, so a cursor kept from before finds none of them.
        const [newest] = await store.listAudit({ limit: 1 });
        expect(await store.expireAudit(iso(T0 + HOUR), 100)).toBe(5);
        await store.appendAudit([entry(40)]);
        expect((await store.listAudit({}))[0]!.id).toBeGreaterThan(newest!.id);
        expect(await store.listAudit({ before: newest!.id })).toEqual([]);
      });
    });
  });
}

describe('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-operators-'));
  const path = join(dir, 'callhook.db');
  let stores = 0;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  operatorsContract('sqlite', {
    open: async () => openSqliteStore({ path }),
    fresh: async () => {
      const own = join(dir, `own-${stores++}.db`);
      const store = openSqliteStore({ path: own });
      return {
        store,
        another: async () => openSqliteStore({ path: own }),
        peek: {
          updateAudit: async (id) => {
            const db = new Database(own);
            try {
              db.prepare(`UPDATE audit_log SET outcome = 'ok', actor = 'someone-else' WHERE id = ?`).run(id);
            } finally {
              db.close();
            }
          },
        },
      };
    },
  });
});

const url = serviceUrl('postgres');

describe.skipIf(!url)('postgres', () => {
  const freshSchema = () => `callhook_test_${randomBytes(6).toString('hex')}`;
  const schema = freshSchema();
  const dropped = [schema];
  let admin: pg.Client;
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const name of dropped) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await admin.end();
  });

  operatorsContract('postgres', {
    open: () => openPostgresStore({ url: url!, schema, poolSize: 5 }),
    fresh: async () => {
      const own = freshSchema();
      dropped.push(own);
      const store = await openPostgresStore({ url: url!, schema: own, poolSize: 5 });
      return {
        store,
        another: () => openPostgresStore({ url: url!, schema: own, poolSize: 5 }),
        peek: {
          updateAudit: async (id) =>
            void (await admin.query(
              `UPDATE "${own}".audit_log SET outcome = 'ok', actor = 'someone-else' WHERE id = $1`,
              [id],
            )),
        },
      };
    },
  });
});
