import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { contentHash } from '../src/normalize/dedup-key.js';
import type { CallRecord } from '../src/record.js';
import type { DeliveryStat, ListCallsQuery } from '../src/store/admin-queries.js';
import type { CommitInput } from '../src/store/calls.js';
import { isFailing } from '../src/store/sink-state.js';
import { CALLER_HISTORY_SQL, callsPageQuery, DELIVERY_STATS_SQL } from '../src/store/sqlite/admin.js';
import { SQLITE_MIGRATIONS } from '../src/store/sqlite/schema.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { registerTextFunctions } from '../src/store/sqlite/text.js';
import type { StoreWrite } from '../src/store/sqlite/writer.js';
import type { Store } from '../src/store/store.js';
import { attemptOk, commitInput } from './helpers/store-inputs.js';
import { storeAdminContract } from './store-admin-contract.js';
import { storeCallsContract } from './store-calls-contract.js';
import {
  type AttemptRow,
  type CountRow,
  type DeliveryRow,
  expectKeptByMigration4,
  ODD_RECORDS,
  OLD_INSERT_COLUMNS,
  type ReceiptRow,
  type StorePeek,
  storeContract,
} from './store-contract.js';
import { storeEditsContract } from './store-edits-contract.js';
import { storeIncidentsContract } from './store-incidents-contract.js';
import { storePeriodContract } from './store-period-contract.js';
import { storeRetentionContract } from './store-retention-contract.js';
import { storeSinksContract } from './store-sinks-contract.js';

/** Commits `count` calls a hundred at a time, as bursts of webhooks arrive. */
async function commitMany(store: Store, count: number, input: (i: number) => CommitInput): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, count - i) }, (_, j) => store.commitCall(input(i + j))));
  }
}

/** Another connection takes the write lock and lets it go, without waiting: SQLITE_BUSY if the lock is held. */
function takeLockAtOnce(file: string): void {
  const other = new Database(file);
  try {
    other.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    other.exec('COMMIT');
  } finally {
    other.close();
  }
}

describe('sqlite store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-store-'));
  const path = join(dir, 'callhook.db');
  // A separate connection, as a second process on the same file would have; opened once the store made the file.
  let reader: Database.Database | undefined;
  const peekDb = () => (reader ??= new Database(path, { readonly: true }));

  afterAll(() => {
    reader?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const peek: StorePeek = {
    receipts: async (hook) =>
      peekDb()
        .prepare(
          'SELECT outcome, status, call_id AS callId, raw_body AS rawBody, ingested_as AS ingestedAs FROM receipts WHERE hook = ? ORDER BY id',
        )
        .all(hook) as ReceiptRow[],
    deliveries: async (callId) =>
      peekDb()
        .prepare('SELECT sink, state, attempts FROM deliveries WHERE call_id = ? ORDER BY sink')
        .all(callId) as DeliveryRow[],
    attempts: async (deliveryId) =>
      peekDb()
        .prepare('SELECT attempt, outcome, http_status AS httpStatus FROM attempts WHERE delivery_id = ? ORDER BY id')
        .all(deliveryId) as AttemptRow[],
    deliveryCounts: async (sinks) =>
      peekDb()
        .prepare(
          'SELECT sink, state, COUNT(*) AS count FROM deliveries WHERE sink IN (SELECT value FROM json_each(?)) GROUP BY sink, state',
        )
        .all(JSON.stringify(sinks)) as CountRow[],
    ingested: async (hook, callId) => {
      const writer = new Database(path);
      try {
        writer
          .prepare(
            `UPDATE receipts SET ingested_as = ? WHERE id = (SELECT max(id) FROM receipts WHERE hook = ? AND outcome = 'rejected')`,
          )
          .run(callId, hook);
      } finally {
        writer.close();
      }
    },
  };
  storeContract('sqlite', async () => openSqliteStore({ path }), peek);
  storeAdminContract('sqlite', async () => openSqliteStore({ path }), peek);
  storeCallsContract('sqlite', async () => openSqliteStore({ path }));
  storeSinksContract('sqlite', async () => openSqliteStore({ path }), peek);
  storePeriodContract('sqlite', async () => openSqliteStore({ path }), peek);
  storeIncidentsContract('sqlite', async () => openSqliteStore({ path }));
  let retentionStores = 0;
  storeRetentionContract('sqlite', async () =>
    openSqliteStore({ path: join(dir, `retention-${retentionStores++}.db`) }),
  );
  storeEditsContract('sqlite', async () => openSqliteStore({ path }), {
    forgetContentHash: async (callId) => {
      const writer = new Database(path);
      try {
        writer.prepare('UPDATE calls SET content_hash = NULL WHERE id = ?').run(callId);
      } finally {
        writer.close();
      }
    },
  });

  it("records the attempts finished in one turn in one write, each as if alone: a stale one changes nothing, and the sink's state follows their order", async () => {
    const file = join(dir, 'finishes.db');
    const writes: StoreWrite[] = [];
    // Sees every write on its way to the thread the store would have; takes none, so each is made in place.
    const store = openSqliteStore({ path: file, remote: (write) => void writes.push(write) });
    try {
      const sink = 'batched';
      for (let i = 0; i < 4; i++) await store.commitCall(commitInput('h', `call_id:f${i}`, [sink]));
      const [ok, stale, failed, after] = await store.claimDeliveries(sink, 4, 60_000);
      writes.length = 0;
      const down = { ...attemptOk, outcome: 'retry' as const, httpStatus: 503, error: 'HTTP 503: down' };
      const recorded = await Promise.all([
        store.finishAttempt(ok!.id, 1, attemptOk),
        store.finishAttempt(stale!.id, 2, attemptOk), // not its attempt: another worker's lease
        store.finishAttempt(failed!.id, 1, down, Date.now() + 60_000),
        store.finishAttempt(after!.id, 1, attemptOk),
      ]);
      expect(recorded).toEqual([true, false, true, true]);
      expect(writes.map((w) => [w.op, (w.args[0] as unknown[]).length])).toEqual([['finishAttempts', 4]]);

      const db = new Database(file, { readonly: true });
      try {
        const states = db.prepare('SELECT id, state FROM deliveries WHERE sink = ? ORDER BY id').all(sink);
        expect(states).toEqual([
          { id: ok!.id, state: 'done' },
          { id: stale!.id, state: 'in_flight' },
          { id: failed!.id, state: 'pending' },
          { id: after!.id, state: 'done' },
        ]);
        const attempts = db.prepare('SELECT delivery_id AS id, outcome FROM attempts ORDER BY id').all();
        expect(attempts).toEqual([
          { id: ok!.id, outcome: 'ok' },
          { id: failed!.id, outcome: 'retry' },
          { id: after!.id, outcome: 'ok' },
        ]);
      } finally {
        db.close();
      }
      // The success after the failure was written too: the sink is not left failing while it delivers.
      const state = (await store.sinkStates()).find((s) => s.sink === sink)!;
      expect(state).toMatchObject({ lastError: 'HTTP 503: down' });
      expect(state.lastSuccessAt).toBeGreaterThanOrEqual(state.lastErrorAt!);
      expect(isFailing(state)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it("reads a caller's history through the calls_phone index, neither scanning nor sorting", async () => {
    await openSqliteStore({ path }).close(); // migrated, whether or not the contracts ran first
    const plan = (sql: string, ...values: unknown[]) =>
      (
        peekDb()
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...values) as { detail: string }[]
      )
        .map((row) => row.detail)
        .join('\n');
    expect(plan(CALLER_HISTORY_SQL.count, '+14155550100')).toMatch(
      /^SEARCH calls USING COVERING INDEX calls_phone \(<expr>=\?\)$/,
    );
    // No "USE TEMP B-TREE FOR ORDER BY": the index gives id order within one phone number.
    expect(plan(CALLER_HISTORY_SQL.calls, '+14155550100', 5)).toMatch(
      /^SEARCH calls USING INDEX calls_phone \(<expr>=\?\)$/,
    );
  });

  it('reads a page of calls that are not test traffic, and the review queue, through the calls_live index, neither scanning every call nor sorting (docs/reference.md#test-traffic)', async () => {
    await openSqliteStore({ path }).close(); // migrated, whether or not the contracts ran first
    const db = peekDb();
    registerTextFunctions(db);
    const plan = (query: ListCallsQuery) => {
      const { sql, params } = callsPageQuery(query);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((row) => row.detail);
    };
    // The calls list's default page, newest first, and the next one from its cursor.
    expect(plan({ hideTest: true, order: 'desc', limit: 50 })).toEqual(['SCAN calls USING INDEX calls_live']);
    expect(plan({ hideTest: true, order: 'desc', limit: 50, after: 'x' })).toEqual([
      'SEARCH calls USING INDEX calls_live (id<?)',
    ]);
    expect(plan({ review: true, limit: 50 })[0]).toBe('SCAN calls USING INDEX calls_live');
    expect(plan({ review: true, limit: 50 }).join('\n')).not.toMatch(/TEMP B-TREE/);
  });

  it("reads /metrics' figures from the kept counts and one index row a sink, never scanning the deliveries (docs/reference.md#metrics)", async () => {
    await openSqliteStore({ path }).close(); // migrated, whether or not the contracts ran first
    const plan = (peekDb().prepare(`EXPLAIN QUERY PLAN ${DELIVERY_STATS_SQL}`).all() as { detail: string }[]).map(
      (row) => row.detail,
    );
    expect(plan).toEqual([
      'SCAN c',
      'CORRELATED SCALAR SUBQUERY 1',
      'SEARCH d USING INDEX deliveries_state_sink (state=? AND sink=?)',
    ]);
  });

  it('counts the deliveries of a database made before migration 5, and follows the writes of a serve of the version before', async () => {
    const old = join(dir, 'before-5.db');
    const db = new Database(old);
    db.unsafeMode(true); // migration 4 edits a table's schema text (sqlite/store.ts's migrate)
    for (const migration of SQLITE_MIGRATIONS.slice(0, 4)) db.exec(migration);
    db.pragma('user_version = 4');
    const insertCall = db.prepare(
      `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES (?, 'h', ?, 'accepted', 'webhook', '2026-11-01T10:00:00.000Z', '{}', '{}')`,
    );
    const insertDelivery = db.prepare(
      `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES (?, ?, ?, 5, ?, ?)`,
    );
    const states = ['done', 'done', 'dead', 'pending', 'in_flight', 'pending'];
    states.forEach((state, i) => {
      insertCall.run(`c${i}`, `call_id:${i}`);
      insertDelivery.run(`c${i}`, 'log', state, 1000 + i, 1000 + i);
      insertDelivery.run(`c${i}`, 'crm', i < 3 ? 'pending' : 'done', 1000 + i, 1000 + i);
    });
    db.close();
    const store = openSqliteStore({ path: old });
    // A serve of the version before, on the same file (a rolling restart on one volume), knows nothing of the counts.
    const before = new Database(old);
    const counted = () =>
      before
        .prepare('SELECT sink, state, COUNT(*) AS count FROM deliveries GROUP BY sink, state ORDER BY sink, state')
        .all();
    const stats = async () => (await store.deliveryStats()).map(({ sink, state, count }) => ({ sink, state, count }));
    try {
      expect(await stats()).toEqual([
        { sink: 'crm', state: 'done', count: 3 },
        { sink: 'crm', state: 'pending', count: 3 },
        { sink: 'log', state: 'dead', count: 1 },
        { sink: 'log', state: 'done', count: 2 },
        { sink: 'log', state: 'in_flight', count: 1 },
        { sink: 'log', state: 'pending', count: 2 },
      ]);
      expect(
        (await store.deliveryStats()).filter((s) => s.state === 'pending').map((s) => [s.sink, s.oldestCreatedAt]),
      ).toEqual([
        ['crm', 1000],
        ['log', 1003],
      ]);
      before.prepare(`UPDATE deliveries SET state = 'done' WHERE sink = 'log' AND state = 'in_flight'`).run();
      before
        .prepare(
          `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES ('c9', 'h', 'call_id:9', 'accepted', 'webhook', '2026-11-01T10:00:00.000Z', '{}', '{}')`,
        )
        .run();
      before
        .prepare(
          `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES ('c9', 'log', 'pending', 5, 9, 9)`,
        )
        .run();
      before.prepare(`DELETE FROM calls WHERE id = 'c0'`).run();
      expect(await stats()).toEqual(counted());
    } finally {
      before.close();
      await store.close();
    }
  });

  it("reads the admin's lists and /metrics' counts on the reader thread exactly as on the store's connection", async () => {
    const file = join(dir, 'stats.db');
    const store = openSqliteStore({ path: file });
    const memory = openSqliteStore({ path: ':memory:' });
    try {
      for (const s of [store, memory]) {
        for (let i = 0; i < 40; i++) await s.commitCall(commitInput('stats', `call_id:s${i}`, ['jsonl', 'log']));
        for (const [n, outcome] of [
          [10, 'ok'],
          [5, 'dead'],
        ] as const) {
          for (const claimed of await s.claimDeliveries('jsonl', n, 60_000))
            await s.finishAttempt(claimed.id, claimed.attempt, { ...attemptOk, outcome });
        }
        await s.claimDeliveries('log', 3, 60_000);
      }
      const direct = new Database(file, { readonly: true });
      const expected = direct.prepare(DELIVERY_STATS_SQL).all();
      direct.close();
      expect(expected.map((s) => Object.values(s as object).slice(0, 3))).toEqual([
        ['jsonl', 'dead', 5],
        ['jsonl', 'done', 10],
        ['jsonl', 'pending', 25],
        ['log', 'in_flight', 3],
        ['log', 'pending', 37],
      ]);

      // Whether the reader thread answers is src/store/sqlite-reader.test.ts's to show; here, that it answers right.
      expect(await store.deliveryStats()).toEqual(expected);
      const found = await store.listCalls({ text: 'call_id:s1', hook: 'stats' });
      // Ids made within one millisecond need not sort in commit order: the set is what is compared.
      expect(found.map((c) => c.record.dedup_key).sort()).toEqual([
        'call_id:s1',
        ...Array.from({ length: 10 }, (_, i) => `call_id:s1${i}`),
      ]);
      expect((await store.listDeliveries({ state: 'dead', sink: 'jsonl' })).map((d) => d.attempts)).toEqual([
        1, 1, 1, 1, 1,
      ]);
      // An in-memory database cannot be opened twice, so it is counted in place, with the same result.
      expect((await memory.deliveryStats()).map(({ oldestCreatedAt: _, ...rest }) => rest)).toEqual(
        (expected as DeliveryStat[]).map(({ oldestCreatedAt: _, ...rest }) => rest),
      );
    } finally {
      await store.close();
      await memory.close();
    }
  });

  it('purges a chunk at a time, leaving the write lock free between chunks', async () => {
    const file = join(dir, 'purge.db');
    const purger = openSqliteStore({ path: file });
    const serve = openSqliteStore({ path: file });
    try {
      const longAgo = Date.parse('2001-01-01T00:00:00Z');
      await commitMany(purger, 1200, (i) => commitInput('old', `call_id:o${i}`, [], longAgo));
      const steps: { calls: number; receipts: number }[] = [];
      const purging = purger.purge(new Date('2002-01-01T00:00:00Z'), { onProgress: (totals) => steps.push(totals) });
      // The first chunk is done and the rest is not, yet another writer gets the lock at once: in one transaction,
      // the purge would have held it to the end.
      expect(steps).toEqual([{ calls: 500, receipts: 0 }]);
      takeLockAtOnce(file);
      const during = await serve.commitCall(commitInput('new', 'call_id:during', []));
      expect(during.outcome).toBe('accepted');
      expect(await purging).toEqual({ calls: 1200, receipts: 1200 });
      // Running totals, one a chunk, for the command's progress line.
      expect(steps.map((t) => `${t.calls}/${t.receipts}`)).toEqual([
        '500/0',
        '1000/0',
        '1200/0',
        '1200/500',
        '1200/1000',
        '1200/1200',
      ]);
      expect(await serve.getCall(during.id)).toBeDefined();
    } finally {
      await purger.close();
      await serve.close();
    }
  });

  it("purges in the background (the retention's) a smaller chunk at a time", async () => {
    const file = join(dir, 'purge-background.db');
    const store = openSqliteStore({ path: file });
    try {
      await commitMany(store, 250, (i) => commitInput('old', `call_id:b${i}`, [], Date.parse('2001-01-01T00:00:00Z')));
      const steps: string[] = [];
      const before = new Date('2002-01-01T00:00:00Z');
      await store.purge(before, { background: true, onProgress: (t) => steps.push(`${t.calls}/${t.receipts}`) });
      expect(steps).toEqual(['100/0', '200/0', '250/0', '250/100', '250/200', '250/250']);
    } finally {
      await store.close();
    }
  });

  it("waits for another connection's write lock without blocking the event loop", async () => {
    const file = join(dir, 'purge-waits.db');
    const store = openSqliteStore({ path: file });
    try {
      await commitMany(store, 10, (i) => commitInput('old', `call_id:w${i}`, [], Date.parse('2001-01-01T00:00:00Z')));
      // Another connection of this very thread holds the lock, and lets it go from a timer: a purge that slept the
      // thread in SQLite's busy handler would keep the timer from running, and fail with SQLITE_BUSY after 2 s.
      const other = new Database(file);
      other.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      let released = 0;
      setTimeout(() => {
        released = performance.now() - started;
        other.exec('COMMIT');
      }, 100);
      expect(await store.purge(new Date('2002-01-01T00:00:00Z'))).toEqual({ calls: 10, receipts: 10 });
      expect(released).toBeGreaterThan(0);
      expect(released).toBeLessThan(1_000);
      other.close();
    } finally {
      await store.close();
    }
  });

  it('purges a chunk at a time past the calls it keeps, deleting as many as it counted', async () => {
    const file = join(dir, 'purge-kept.db');
    const store = openSqliteStore({ path: file });
    try {
      const longAgo = Date.parse('2001-01-01T00:00:00Z');
      // Every third call held: each chunk meets some it keeps, and the walk must go on past them, not stop short.
      await commitMany(store, 1600, (i) => ({
        ...commitInput('old', `call_id:k${i}`, [], longAgo),
        status: i % 3 === 0 ? 'held' : 'accepted',
      }));
      const before = new Date('2002-01-01T00:00:00Z');
      const counted = await store.purgeable(before);
      expect(counted).toEqual({ calls: 1066, receipts: 1066 });
      const steps: string[] = [];
      expect(await store.purge(before, { onProgress: (t) => steps.push(`${t.calls}/${t.receipts}`) })).toEqual(counted);
      expect(steps.length).toBeGreaterThan(6);
      expect(await store.purgeable(before)).toEqual({ calls: 0, receipts: 0 });
      expect(await store.listCalls({ hook: 'old', limit: 2000 })).toHaveLength(534);
    } finally {
      await store.close();
    }
  });

  it('purges test traffic a chunk at a time past the real calls it keeps, with their receipts, as many as it counted', async () => {
    const file = join(dir, 'purge-test-traffic.db');
    const store = openSqliteStore({ path: file });
    try {
      // Every third call real: each chunk meets some it keeps, the walk goes past them, and their receipts stay.
      await commitMany(store, 1600, (i) => {
        const input = commitInput('mixed', `call_id:t${i}`, [], Date.parse('2001-01-01T00:00:00Z') + i);
        input.record.source = i % 3 === 0 ? 'webhook' : i % 3 === 1 ? 'replay' : 'simulate';
        return input;
      });
      const options = { sources: ['replay', 'simulate'] as const };
      const counted = await store.purgeable(null, options);
      expect(counted).toEqual({ calls: 1066, receipts: 1066 });
      const steps: string[] = [];
      const purged = await store.purge(null, { ...options, onProgress: (t) => steps.push(`${t.calls}/${t.receipts}`) });
      expect(purged).toEqual(counted);
      expect(steps.length).toBeGreaterThan(3);
      expect(await store.purgeable(null, options)).toEqual({ calls: 0, receipts: 0 });
      const left = await store.listCalls({ hook: 'mixed', limit: 2000 });
      expect(left).toHaveLength(534);
      expect(left.every((c) => c.record.source === 'webhook')).toBe(true);
      const db = new Database(file, { readonly: true });
      try {
        expect(db.prepare('SELECT count(*) FROM receipts').pluck().get()).toBe(534);
      } finally {
        db.close();
      }
    } finally {
      await store.close();
    }
  });

  it('retries deliveries a chunk at a time, each once, leaving the write lock free between chunks', async () => {
    const file = join(dir, 'retry.db');
    const store = openSqliteStore({ path: file });
    const other = new Database(file);
    try {
      await commitMany(store, 1200, (i) => commitInput('h', `call_id:r${i}`, ['crm']));
      other.prepare(`UPDATE deliveries SET state = 'dead', attempts = 8 WHERE id % 3 <> 0`).run();
      const retrying = store.retryDeliveries({ state: 'dead' });
      // The first chunk is done and the rest is not, yet another writer gets the lock at once: in one statement,
      // the retry would have held it to the end.
      expect(other.prepare(`SELECT COUNT(*) FROM deliveries WHERE state = 'dead'`).pluck().get()).toBe(300);
      takeLockAtOnce(file);
      expect(await retrying).toBe(800);
      expect(await store.countDeliveries()).toMatchObject({ pending: 1200, dead: 0 });
      // Pending ones made due now stay pending: past the first chunk, the cursor keeps each from being taken twice.
      expect(await store.retryDeliveries({ state: 'pending', sink: 'crm' })).toBe(1200);
      const deliveries = await store.listDeliveries({ state: 'pending', limit: 1500 });
      expect(deliveries.every((d) => d.attempts === 0)).toBe(true);
    } finally {
      other.close();
      await store.close();
    }
  });

  it("takes back deliveries left in flight only when no other serve runs on the file, never a running serve's", async () => {
    const file = join(dir, 'serves.db');
    const opened: Store[] = [];
    const open = () => {
      const store = openSqliteStore({ path: file });
      opened.push(store);
      return store;
    };
    const close = async (store: Store) => {
      opened.splice(opened.indexOf(store), 1);
      await store.close();
    };
    const first = open();
    try {
      expect(await first.resumeInFlight()).toEqual({ resumed: 0, besideAnother: false });
      await first.commitCall(commitInput('h', 'call_id:held', ['crm']));
      const [held] = await first.claimDeliveries('crm', 10, 60_000);
      expect(held).toBeDefined();

      // A second serve on the file (a rolling restart): the first one's delivery stays its own.
      const second = open();
      expect(await second.resumeInFlight()).toEqual({ resumed: 0, besideAnother: true });
      expect(await second.claimDeliveries('crm', 10, 60_000)).toEqual([]);
      // The first one's end lets the lock go; the second one still runs, so a third takes nothing either.
      await close(first);
      expect(await open().resumeInFlight()).toEqual({ resumed: 0, besideAnother: true });

      // With every serve gone, the delivery is a dead process's: the next serve takes it back at once.
      for (const store of [...opened]) await close(store);
      const last = open();
      expect(await last.resumeInFlight()).toEqual({ resumed: 1, besideAnother: false });
      expect((await last.claimDeliveries('crm', 10, 60_000)).map((d) => d.id)).toEqual([held!.id]);
    } finally {
      for (const store of opened) await store.close().catch(() => undefined);
    }
  });

  it('edits the calls of a database made before migration 8: the queue finds them, an edit keeps what a repeat is compared with, and a serve of the version before still purges them', async () => {
    const old = join(dir, 'before-8.db');
    const db = new Database(old);
    db.unsafeMode(true); // migration 4 changes a table's schema text in place (sqlite/store.ts migrate)
    for (const migration of SQLITE_MIGRATIONS.slice(0, 7)) db.exec(migration);
    db.pragma('user_version = 7');
    // Stored before records carried a revision, and before calls had a content hash.
    const problems = [
      { field: 'call_outcome', code: 'missing_required', message: 'call_outcome is required but was missing or empty' },
    ];
    const record = {
      id: 'e1',
      hook: 'h',
      dedup_key: 'order_id:ORD-8',
      received_at: '2001-11-01T10:00:00.000Z',
      source: 'webhook',
      data: { first_name: 'Asha' },
      extra: {},
      problems,
    };
    db.prepare(
      `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES ('e1', 'h', 'order_id:ORD-8', 'accepted', 'webhook', ?, ?, '{}')`,
    ).run(record.received_at, JSON.stringify(record));
    db.close();
    const store = openSqliteStore({ path: old });
    try {
      expect((await store.listCalls({ hook: 'h', review: true })).map((c) => c.record.id)).toEqual(['e1']);
      const edited = {
        ...record,
        revision: 2,
        data: { first_name: 'Asha Rao' },
        problems: problems as CallRecord['problems'],
        source: 'webhook' as const,
      };
      expect(
        await store.editCall(
          'e1',
          { at: new Date().toISOString(), fields: { first_name: { before: 'Asha', after: 'Asha Rao' } }, revision: 2 },
          edited,
        ),
      ).toBe('edited');
      const repeat = {
        ...commitInput('h', 'order_id:ORD-8', [], Date.now(), record.data),
        contentHash: contentHash(record.data, record.extra, problems as CallRecord['problems']),
      };
      expect(await store.commitCall(repeat)).toEqual({ outcome: 'duplicate', id: 'e1' });
    } finally {
      await store.close();
    }
    // A serve of the version before deletes the call as it always did: its edits go with it (ON DELETE CASCADE).
    const before = new Database(old);
    try {
      before.pragma('foreign_keys = ON');
      before.prepare(`DELETE FROM calls WHERE id = 'e1'`).run();
      expect(before.prepare('SELECT count(*) FROM call_edits').pluck().get()).toBe(0);
    } finally {
      before.close();
    }
  });

  it('keeps the calls of a database made before migration 4 with their keys, their deliveries, revision 1 and the hash of their content', async () => {
    const old = join(dir, 'before-4.db');
    const db = new Database(old);
    for (const migration of SQLITE_MIGRATIONS.slice(0, 3)) db.exec(migration);
    db.pragma('user_version = 3');
    const record = {
      id: 'c1',
      hook: 'h',
      dedup_key: 'order_id:ORD-1',
      received_at: '2026-11-01T10:00:00.000Z',
      source: 'webhook',
      data: { call_outcome: 'order placed', call_cost: 1.5 },
      extra: { call_id: 'x' },
      problems: [],
    };
    db.prepare(
      `INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw) VALUES ('c1', 'h', 'order_id:ORD-1', 'accepted', 'webhook', ?, ?, '{}')`,
    ).run(record.received_at, JSON.stringify(record));
    db.prepare(
      `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES ('c1', 'log', 'done', 5, 1234, 1234)`,
    ).run();
    for (const [key, text] of ODD_RECORDS) {
      db.prepare(
        `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES (?, 'h', ?, 'accepted', 'webhook', '2026-11-01T10:00:00.000Z', ?, '{}')`,
      ).run(key, key, text);
    }
    db.close();
    const store = openSqliteStore({ path: old });
    // A serve of the version before, on the same file (a rolling restart on one volume): its insert names no new
    // column.
    const before = new Database(old);
    try {
      expect((await store.listDeliveries({ callId: 'c1' })).map((d) => [d.sink, d.state])).toEqual([['log', 'done']]);
      await expectKeptByMigration4(store, record, async (id, key, text) => {
        before
          .prepare(
            `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES (?, 'h', ?, 'accepted', 'webhook', '2026-11-25T10:00:00.000Z', ?, '{}') ON CONFLICT (hook, dedup_key) DO NOTHING`,
          )
          .run(id, key, text);
      });
      expect(before.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      before.close();
      await store.close();
    }
  });

  it('migrates a file of the version before once when two processes open it at the same moment, and both then commit', async () => {
    const file = join(dir, 'two-at-once.db');
    const db = new Database(file);
    for (const migration of SQLITE_MIGRATIONS.slice(0, 3)) db.exec(migration);
    db.pragma('user_version = 3');
    db.close();
    // Each process opens the store, commits one call without a key (which migration 4 allows) and says so.
    const script = `
      import { openSqliteStore } from './src/store/sqlite/store.ts';
      import { commitInput } from './test/helpers/store-inputs.ts';
      const store = openSqliteStore({ path: process.argv[1] });
      const { outcome } = await store.commitCall(commitInput('h', null, []));
      await store.close();
      console.log(outcome);`;
    const run = () =>
      new Promise<string>((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script, file],
          (err, stdout, stderr) => (err ? reject(new Error(stderr)) : resolve(stdout.trim())),
        );
      });
    expect(await Promise.all([run(), run()])).toEqual(['accepted', 'accepted']);
    const after = new Database(file, { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length);
      expect(after.prepare('SELECT COUNT(*) FROM calls WHERE dedup_key IS NULL').pluck().get()).toBe(2);
    } finally {
      after.close();
    }
  });

  it('runs on a file a newer version migrated, keeping its schema number, so the newer version opens it again', async () => {
    const file = join(dir, 'newer.db');
    await (await openSqliteStore({ path: file })).close();
    // What a later version's migration might add, and its number.
    const newer = new Database(file);
    newer.exec('CREATE TABLE later_feature (id INTEGER PRIMARY KEY)');
    newer.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`);
    newer.close();

    const store = openSqliteStore({ path: file });
    try {
      expect((await store.commitCall(commitInput('h', 'k-newer', []))).outcome).toBe('accepted');
    } finally {
      await store.close();
    }
    const after = new Database(file, { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length + 1);
    } finally {
      after.close();
    }
  });

  it('gives the deliveries of a database made before migration 2 their last change as creation time', async () => {
    const old = join(dir, 'old.db');
    const db = new Database(old);
    db.exec(SQLITE_MIGRATIONS[0]!);
    db.pragma('user_version = 1');
    db.prepare(
      `INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw) VALUES ('c1', 'h', 'k', 'accepted', 'webhook', '', '{}', '{}')`,
    ).run();
    db.prepare(
      `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at) VALUES ('c1', 'log', 'pending', 5, 1234)`,
    ).run();
    db.close();
    const store = openSqliteStore({ path: old });
    try {
      expect(await store.deliveryStats()).toEqual([{ sink: 'log', state: 'pending', count: 1, oldestCreatedAt: 1234 }]);
    } finally {
      await store.close();
    }
  });
});
