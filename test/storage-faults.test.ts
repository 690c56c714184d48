import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { compileHooks } from '../src/intake/pipeline.js';
import { openSqliteStore, sqliteStoreOn } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { appOn } from './helpers/app.js';
import { KEY, sampleCall, tempDir, until } from './helpers/server.js';

/**
 * When SQLite cannot commit, the sender gets 503 with the Error object (never a 200), readiness turns 503,
 * nothing is half-written, and intake recovers by itself once the fault clears.
 */

function receiver(db: Database.Database) {
  const app = appOn(sqliteStoreOn(db, { busyTimeoutMs: 200 }));
  const send = (call: Record<string, unknown>) =>
    app.request('/webhooks/end-of-call', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(call),
    });
  const ready = async () => (await app.request('/readyz')).status;
  return { send, ready };
}

const count = (db: Database.Database, sql: string) => db.prepare(sql).pluck().get() as number;

function expectWhole(db: Database.Database) {
  // Every stored call has its delivery rows' receipt; no receipt or delivery points at a call that is not there.
  expect(
    count(db, `SELECT COUNT(*) FROM receipts WHERE outcome = 'accepted' AND call_id NOT IN (SELECT id FROM calls)`),
  ).toBe(0);
  expect(
    count(db, `SELECT COUNT(*) FROM calls WHERE id NOT IN (SELECT call_id FROM receipts WHERE outcome = 'accepted')`),
  ).toBe(0);
  expect(count(db, `SELECT COUNT(*) FROM deliveries WHERE call_id NOT IN (SELECT id FROM calls)`)).toBe(0);
}

describe('a full disk', () => {
  it('answers 503, fails readiness, half-writes nothing, and recovers when space returns', async () => {
    const db = new Database(join(tempDir(), 'callhook.db'));
    const { send, ready } = receiver(db);
    expect((await send(sampleCall({ call_id: 'before' }))).status).toBe(200);
    expect(await ready()).toBe(200);

    // The database may not grow past the pages it has: what SQLite sees on a full disk. VACUUM first, so no free
    // page is left over for a call to slip into.
    db.exec('VACUUM');
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true })}`);
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(sampleCall({ call_id: `full-${i}`, call_summary: 'z'.repeat(3000) }))),
    );
    const bodies = await Promise.all(replies.map((r) => r.json()));
    const refused = replies.filter((r) => r.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(18);
    replies.forEach((res, i) => {
      if (res.status === 503)
        expect(bodies[i]).toEqual({ error: 503, message: 'The store cannot commit the call right now' });
      else expect(res.status).toBe(200);
    });
    expect(await ready()).toBe(503);
    // Exactly the calls that got a 200 are stored, each whole.
    const stored = db.prepare(`SELECT dedup_key FROM calls WHERE dedup_key LIKE 'call_id:full-%'`).pluck().all();
    expect(stored.length).toBe(replies.length - refused.length);
    expectWhole(db);

    db.pragma('max_page_count = 1073741823');
    expect(await ready()).toBe(200);
    const again = await send(sampleCall({ call_id: 'after-full', call_summary: 'z'.repeat(3000) }));
    expect(again.status).toBe(200);
    expect((await again.json()).status).toBe('accepted');
    expectWhole(db);
  });
});

describe('a read-only database', () => {
  it('answers 503 and recovers', async () => {
    const db = new Database(join(tempDir(), 'callhook.db'));
    const { send, ready } = receiver(db);
    db.pragma('query_only = ON');
    expect((await send(sampleCall())).status).toBe(503);
    expect(await ready()).toBe(503);
    db.pragma('query_only = OFF');
    expect(await ready()).toBe(200);
    expect((await send(sampleCall())).status).toBe(200);
    expectWhole(db);
  });
});

describe('a database locked by another process', () => {
  it('answers 503 after the busy timeout, well inside the sender’s 10 s, and recovers when the lock goes', async () => {
    const path = join(tempDir(), 'callhook.db');
    const db = new Database(path);
    const { send, ready } = receiver(db);
    expect((await send(sampleCall())).status).toBe(200);

    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    const res = await send(sampleCall({ call_id: 'locked' }));
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await ready()).toBe(503);
    other.exec('ROLLBACK');
    other.close();

    expect(await ready()).toBe(200);
    expect((await send(sampleCall({ call_id: 'locked' }))).status).toBe(200);
    expectWhole(db);
  });
});

/**
 * A store that answers nothing (a PostgreSQL behind a network that drops packets): while `hang` is on, its writes,
 * reads and probe wait for `release()`, then go through.
 */
function hangingStore(db: Database.Database) {
  const store = sqliteStoreOn(db);
  let gate: Promise<void> | undefined;
  let open = () => {};
  const held =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (gate) await gate;
      return fn(...args);
    };
  const hanging: Store = {
    ...store,
    commitCall: held(store.commitCall),
    recordRejection: held(store.recordRejection),
    callerHistory: held(store.callerHistory),
    ping: held(store.ping),
  };
  return {
    store: hanging,
    hang: () => void (gate = new Promise((resolve) => (open = resolve))),
    release: () => ((gate = undefined), open()),
  };
}

describe('a store that hangs', () => {
  it('is answered 503 at the deadline, readiness too; a commit that lands late is kept', async () => {
    const db = new Database(join(tempDir(), 'callhook.db'));
    const { store, hang, release } = hangingStore(db);
    const app = appOn(store, { http: { storeDeadlineMs: 300 } });
    const send = (call: Record<string, unknown>) =>
      app.request('/webhooks/end-of-call', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(call),
      });

    hang();
    const res = await send(sampleCall({ call_id: 'while-hung' }));
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 503, message: 'The store cannot commit the call right now' });
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(503);
    // Which check failed, not why: the reason goes to the log (docs/reference.md#operating).
    expect((await ready.json()).checks.store).toBe('failing');
    // A refusal that is not the store's fault waits for its receipt at most as long.
    const broken = await app.request('/webhooks/end-of-call', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{broken',
    });
    expect(broken.status).toBe(400);

    release();
    await until(() => count(db, `SELECT COUNT(*) FROM calls WHERE dedup_key = 'call_id:while-hung'`) === 1);
    expect((await app.request('/readyz')).status).toBe(200);
    // The sender, who got a 503, never sends it again; if someone does, it is the call already stored.
    expect(await (await send(sampleCall({ call_id: 'while-hung' }))).json()).toMatchObject({ status: 'duplicate' });
    expect((await send(sampleCall({ call_id: 'after' }))).status).toBe(200);
    expectWhole(db);
  });
});

describe('a store that cannot read the caller history', () => {
  it('answers each in-call lookup 503 and logs the outage once, then its end', async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.yaml');
    writeFileSync(path, 'hooks:\n  caller-lookup:\n    kind: in-call\n');
    const store = openSqliteStore({ path: ':memory:' });
    let down = true;
    const failing: Store = {
      ...store,
      callerHistory: (...args) =>
        down
          ? Promise.reject(Object.assign(new Error('connection terminated'), { code: 'ECONNRESET' }))
          : store.callerHistory(...args),
    };
    const lines: { level: number; msg: string; refusedLookups?: number }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const app = appOn(failing, {
      hooks: compileHooks(loadConfig({ CALLHOOK_API_KEYS: KEY, CALLHOOK_CONFIG: path })),
      log,
    });
    const lookup = () =>
      app.request('/webhooks/caller-lookup', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{"phone_number":"09812345678"}',
      });

    const replies = await Promise.all(Array.from({ length: 20 }, lookup));
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(503));
    expect(await replies[0]!.json()).toEqual({
      error: 503,
      message: 'The store cannot commit the call right now: the caller history cannot be read',
    });
    down = false;
    expect((await lookup()).status).toBe(200);

    const outage = lines.filter((l) => l.msg !== 'request');
    expect(outage.map((l) => [l.level, l.msg])).toEqual([
      [50, 'cannot read the caller history; in-call hooks answer 503 until the store reads again'],
      [40, 'the store reads the caller history again'],
    ]);
    expect(outage[1]!.refusedLookups).toBe(20);
  });
});
