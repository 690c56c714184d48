import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { CallRecord } from '../record.js';
import { sqliteAdmin } from './sqlite-admin.js';
import { createWriteBatcher } from './sqlite-batch.js';
import { sqliteReader } from './sqlite-reader.js';
import { SQLITE_MIGRATIONS } from './sqlite-schema.js';
import type { AttemptResult, ClaimedDelivery, CommitInput, CommitResult, DeliveryState, Receipt, Store } from './store.js';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for tests that need no durability. */
  path: string;
  /**
   * How long a writer waits for another process's lock before the commit fails (and the reply is 503).
   * better-sqlite3 waits synchronously, holding up the whole process, so this stays well inside the sender's 10 s.
   */
  busyTimeoutMs?: number;
  /** Told the size of every group commit (metrics, tests). */
  onFlush?: (size: number) => void;
}

type Db = Database.Database;

/**
 * Calls (with their deliveries and attempts) or receipts deleted per transaction by purge. SQLite has one writer:
 * a purge of months in one transaction held the lock for seconds (2.7 s for 200,000 calls), longer than serve
 * waits for it, and calls arriving meanwhile were refused. A chunk holds it for milliseconds.
 */
const PURGE_CHUNK = 500;

/** About the size of two calls: needs fresh pages, as a commit of real calls would. */
const PROBE = 'x'.repeat(8192);

export function openSqliteStore({ path, ...options }: SqliteStoreOptions): Store {
  // The data dir holds callers' personal data: readable by its owner only when callhook creates it.
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return sqliteStoreOn(new Database(path), options);
}

/** The store on a connection the caller opened: for tests that must reach the connection to break it. */
export function sqliteStoreOn(db: Db, { busyTimeoutMs = 2000, onFlush }: Omit<SqliteStoreOptions, 'path'> = {}): Store {
  // Contract section 2: a 200 leaves only after a commit that survives power loss, so WAL with FULL sync.
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  migrate(db);

  const commit = prepareCommit(db);
  const stmts = prepareStatements(db);
  // Every write of the request path and of the delivery worker goes through the group commit.
  const write = createWriteBatcher(db, onFlush);
  const reader = sqliteReader(db);

  return {
    kind: 'sqlite',
    commitCall: (input) => write(() => commit(input)),
    recordRejection: (receipt) => write(() => void stmts.insertReceipt.run(receiptParams(receipt, null))),
    claimDeliveries: (sink, limit, leaseMs) => write(() => claim(stmts, sink, limit, leaseMs)),
    finishAttempt: (id, attempt, result, retryAt) => write(() => finish(stmts, id, attempt, result, retryAt)),
    resumeInFlight: async () => stmts.resume.run().changes,
    releaseLeases: (ids) => write(() => void stmts.release.run(JSON.stringify(ids))),
    nextDueIn: async (sink) => {
      const row = stmts.nextDue.get({ sink }) as { at: number | null } | undefined;
      return row?.at == null ? undefined : Math.max(0, row.at - Date.now());
    },
    countDeliveries: async () => countDeliveries(stmts),
    ...sqliteAdmin(db, reader),
    purge: async (before, onProgress) => {
      const cutoff = before.toISOString();
      const purged = { calls: 0, receipts: 0 };
      for (const [what, statement] of [['calls', stmts.purgeCalls], ['receipts', stmts.purgeReceipts]] as const) {
        for (;;) {
          const started = performance.now();
          const { changes } = db.transaction(() => statement.run(cutoff, PURGE_CHUNK)).immediate();
          purged[what] += changes;
          onProgress?.({ ...purged });
          if (changes < PURGE_CHUNK) break;
          // The lock stays free as long as the chunk held it, so a running serve's commits get their turn.
          await sleep(Math.max(1, performance.now() - started));
        }
      }
      return purged;
    },
    // Through the group commit, so readiness proves a commit (and its fsync) goes through now. The probe row is
    // larger than a page, so a database that cannot grow (disk full, max_page_count) fails here as a call would.
    ping: () =>
      write(() => {
        stmts.heartbeat.run(new Date().toISOString());
        stmts.probe.run(PROBE);
        stmts.unprobe.run();
      }),
    close: async () => {
      await reader.close();
      db.close();
    },
  };
}

function migrate(db: Db): void {
  // The version is read inside the write lock, so two processes opening a new file migrate it once.
  db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    for (let v = version; v < SQLITE_MIGRATIONS.length; v++) db.exec(SQLITE_MIGRATIONS[v]!);
    if (version < SQLITE_MIGRATIONS.length) db.pragma(`user_version = ${SQLITE_MIGRATIONS.length}`);
  }).immediate();
}

function prepareCommit(db: Db): (input: CommitInput) => CommitResult {
  const insertCall = db.prepare(`
    INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw)
    VALUES (@id, @hook, @dedup_key, @status, @source, @received_at, @record, @raw)
    ON CONFLICT (hook, dedup_key) DO NOTHING`);
  const findFirst = db.prepare('SELECT id FROM calls WHERE hook = ? AND dedup_key = ?').pluck();
  const countDuplicate = db.prepare('UPDATE calls SET duplicates = duplicates + 1 WHERE id = ?');
  const insertDelivery = db.prepare(`
    INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES (?, ?, 'pending', ?, ?, ?)`);
  const insertReceipt = db.prepare(receiptInsertSql);

  return (input: CommitInput): CommitResult => {
    const { record, status, raw, sinks, receipt } = input;
    const inserted = insertCall.run({
      id: record.id,
      hook: record.hook,
      dedup_key: record.dedup_key,
      status,
      source: record.source,
      received_at: record.received_at,
      record: JSON.stringify(record),
      raw: JSON.stringify(raw),
    });
    if (inserted.changes === 0) {
      const firstId = findFirst.get(record.hook, record.dedup_key) as string;
      countDuplicate.run(firstId);
      insertReceipt.run(receiptParams({ ...receipt, status: 200, outcome: 'duplicate' }, firstId));
      return { outcome: 'duplicate', id: firstId };
    }
    const now = Date.now();
    for (const sink of sinks) insertDelivery.run(record.id, sink, now, now, now);
    insertReceipt.run(receiptParams({ ...receipt, status: 200, outcome: status }, record.id));
    return { outcome: status, id: record.id };
  };
}

const receiptInsertSql = `
  INSERT INTO receipts (hook, received_at, method, content_type, size, status, outcome, call_id, error, raw_body)
  VALUES (@hook, @received_at, @method, @content_type, @size, @status, @outcome, @call_id, @error, @raw_body)`;

function receiptParams(r: Receipt, callId: string | null) {
  return {
    hook: r.hook,
    received_at: r.receivedAt,
    method: r.method,
    content_type: r.contentType,
    size: r.size,
    status: r.status,
    outcome: r.outcome,
    call_id: callId,
    error: r.error ?? null,
    raw_body: r.rawBody ? Buffer.from(r.rawBody.buffer, r.rawBody.byteOffset, r.rawBody.byteLength) : null,
  };
}

function prepareStatements(db: Db) {
  return {
    insertReceipt: db.prepare(receiptInsertSql),
    // Each branch walks the (sink, state, next_attempt_at) index alone: an OR across states would scan every
    // delivery the sink ever had, done ones included, and grow slower with the history (bench/results.md).
    // Leases left by a killed process come first; then pending ones in index order, so no sort is needed.
    claim: db.prepare(`
      UPDATE deliveries SET state = 'in_flight', lease_until = @lease_until, attempts = attempts + 1, updated_at = @now
      WHERE id IN (
        SELECT id FROM (SELECT id FROM deliveries WHERE sink = @sink AND state = 'in_flight' AND lease_until <= @now LIMIT @limit)
        UNION ALL
        SELECT id FROM (SELECT id FROM deliveries WHERE sink = @sink AND state = 'pending' AND next_attempt_at <= @now
          ORDER BY next_attempt_at, id LIMIT @limit)
        LIMIT @limit)
      RETURNING id`).pluck(),
    claimed: db.prepare(`
      SELECT d.id, d.sink, d.attempts, c.record FROM deliveries d JOIN calls c ON c.id = d.call_id
      WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.id`),
    insertAttempt: db.prepare(`
      INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error)
      VALUES (@id, @attempt, @started_at, @duration_ms, @outcome, @http_status, @error)`),
    // Only the lease holder of this very attempt may move the delivery on (see finish).
    finish: db.prepare(`
      UPDATE deliveries SET state = @state, next_attempt_at = @next_attempt_at, lease_until = NULL, last_error = @error, updated_at = @now
      WHERE id = @id AND state = 'in_flight' AND attempts = @attempt`),
    release: db.prepare(`
      UPDATE deliveries SET state = 'pending', lease_until = NULL, attempts = attempts - 1
      WHERE state = 'in_flight' AND id IN (SELECT value FROM json_each(?))`),
    resume: db.prepare(`UPDATE deliveries SET state = 'pending', lease_until = NULL WHERE state = 'in_flight'`),
    nextDue: db.prepare(`SELECT MIN(at) AS at FROM (
      SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE sink = @sink AND state = 'pending'
      UNION ALL SELECT MIN(lease_until) FROM deliveries WHERE sink = @sink AND state = 'in_flight')`),
    countDeliveries: db.prepare('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state'),
    purgeCalls: db.prepare(`DELETE FROM calls WHERE id IN (
      SELECT id FROM calls WHERE received_at < ? AND NOT EXISTS (
        SELECT 1 FROM deliveries d WHERE d.call_id = calls.id AND d.state IN ('pending', 'in_flight'))
      LIMIT ?)`),
    purgeReceipts: db.prepare('DELETE FROM receipts WHERE id IN (SELECT id FROM receipts WHERE received_at < ? LIMIT ?)'),
    probe: db.prepare(`INSERT INTO meta (key, value) VALUES ('probe', ?)`),
    unprobe: db.prepare(`DELETE FROM meta WHERE key = 'probe'`),
    heartbeat: db.prepare(`INSERT INTO meta (key, value) VALUES ('heartbeat', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function claim(stmts: Statements, sink: string, limit: number, leaseMs: number): ClaimedDelivery[] {
  const now = Date.now();
  const ids = stmts.claim.all({ sink, now, lease_until: now + leaseMs, limit }) as number[];
  if (ids.length === 0) return [];
  const rows = stmts.claimed.all(JSON.stringify(ids)) as { id: number; sink: string; attempts: number; record: string }[];
  return rows.map((r) => ({ id: r.id, sink: r.sink, attempt: r.attempts, record: JSON.parse(r.record) as CallRecord }));
}

/**
 * A worker whose lease expired may still finish after another one took the delivery over as the next attempt:
 * its result is dropped, attempt row included, so the history holds each attempt number once and a late `done`
 * never overwrites the newer attempt's state.
 */
function finish(stmts: Statements, id: number, attempt: number, result: AttemptResult, retryAt?: number): boolean {
  const state: DeliveryState = result.outcome === 'ok' ? 'done' : result.outcome === 'dead' ? 'dead' : 'pending';
  const now = Date.now();
  const error = result.error ?? null;
  if (stmts.finish.run({ id, attempt, state, next_attempt_at: retryAt ?? now, error, now }).changes === 0) return false;
  stmts.insertAttempt.run({
    id,
    attempt,
    started_at: result.startedAt,
    duration_ms: result.durationMs,
    outcome: result.outcome,
    http_status: result.httpStatus ?? null,
    error,
  });
  return true;
}

function countDeliveries(stmts: Statements): Record<DeliveryState, number> {
  const counts: Record<DeliveryState, number> = { pending: 0, in_flight: 0, done: 0, dead: 0 };
  for (const row of stmts.countDeliveries.all() as { state: DeliveryState; n: number }[]) counts[row.state] = row.n;
  return counts;
}
