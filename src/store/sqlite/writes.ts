import type Database from 'better-sqlite3';
import { recordContentHash } from '../../normalize/dedup-key.js';
import type { CommitResult } from '../calls.js';
import type { AttemptResult, DeliveryState } from '../outbox.js';
import { RECONCILE_RUN_KEY } from '../reconcile-run.js';
import { heldUntil } from '../sink-state.js';
import { type CallRow, type ClaimedRow, type FinishedAttempt, parseStored, type ReceiptRow } from './rows.js';
import { sqliteSinkStateWrites } from './sink-state.js';

/**
 * Every write of the request path and of the delivery worker, as plain functions of a connection. They run where
 * the SQLite store's writer runs (its own thread, or in place), inside its group commit, so they take and return
 * only what passes between threads: strings, numbers and bytes (rows.ts).
 */

export interface SqliteWrites {
  commitCall(call: CallRow): CommitResult;
  recordReceipt(receipt: ReceiptRow): void;
  claimDeliveries(sink: string, limit: number, leaseMs: number, pausedByDefault?: boolean): ClaimedRow[];
  finishAttempt(id: number, attempt: number, result: AttemptResult, retryAt?: number, pauseSinkUntil?: number): boolean;
  /** The attempts that finished in one turn, in one write: each one's finishAttempt, in order. */
  finishAttempts(finishes: readonly FinishedAttempt[]): boolean[];
  releaseLeases(ids: readonly number[]): void;
  /** docs/reference.md#what-every-sink-shares: an operator's pause or resume of a sink. */
  setSinkPaused(sink: string, paused: boolean): void;
  recordSinkError(sink: string, error: string): void;
  /**
   * docs/reference.md#dashboard: the last reconcile run, as the JSON of reconcile-run.ts, in place of the one before.
   */
  recordReconcileRun(json: string): void;
  /** Writes and removes a row larger than a page: a database that cannot grow fails here as a call would. */
  ping(): void;
}

/** About the size of two calls: needs fresh pages, as a commit of real calls would. */
const PROBE = 'x'.repeat(8192);

/** How long a connection waits for another's lock before its commit fails (and the reply is 503). */
export const BUSY_TIMEOUT_MS = 2000;

/**
 * Every connection that writes. docs/reference.md#receiving: a 200 leaves only after a commit that survives power loss,
 * so WAL with FULL sync. better-sqlite3 waits for another connection's lock synchronously, blocking its thread, so the
 * busy timeout stays well inside the sender's 10 s.
 */
export function configureConnection(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.pragma('foreign_keys = ON');
  // Deleted content is overwritten with zeros, not left in free pages (docs/reference.md#erasure): what an erasure or
  // the retention removes is gone from the file once a checkpoint has copied the pages over it. Freed cells are
  // mostly on pages the write dirties anyway, so intake pays next to nothing for it.
  db.pragma('secure_delete = ON');
}

export type WriteOp = keyof SqliteWrites;

/**
 * The delivery worker's bookkeeping, which may commit without an fsync of its own (sqlite/batch.ts): undone by a
 * power cut, a claim or a finished attempt only means the delivery is made again, as at-least-once allows.
 */
const LAZY_SYNC: ReadonlySet<WriteOp> = new Set<WriteOp>([
  'claimDeliveries',
  'finishAttempt',
  'finishAttempts',
  'releaseLeases',
]);

export const lazySync = (op: WriteOp): boolean => LAZY_SYNC.has(op);

/** One of the writes by its name, as the store asks for it in place and as a message to the thread names it. */
export function runWrite(writes: SqliteWrites, op: WriteOp, args: readonly unknown[]): unknown {
  return (writes[op] as (...args: readonly unknown[]) => unknown)(...args);
}

export function sqliteWrites(db: Database.Database): SqliteWrites {
  const stmts = prepareStatements(db);
  const sinks = sqliteSinkStateWrites(db);

  const insertReceipt = (receipt: ReceiptRow, callId: string | null) => {
    const body = receipt.raw_body;
    // Bytes that crossed from another thread arrive as a plain Uint8Array; the driver binds a Buffer as a BLOB.
    const rawBody = body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : null;
    // Positional, in the statement's column order: see receiptRow (rows.ts) on spreads.
    stmts.insertReceipt.run(
      receipt.hook,
      receipt.received_at,
      receipt.method,
      receipt.content_type,
      receipt.size,
      receipt.status,
      receipt.outcome,
      callId,
      receipt.error,
      rawBody,
      receipt.query,
      receipt.source,
    );
  };

  /** A call stored before its hash had a column: hashed once from its record, which no edit has changed. */
  const fillContentHash = (id: string, record: string): string => {
    const hash = recordContentHash(parseStored(record));
    stmts.fillContentHash.run(hash, id);
    return hash;
  };

  /** An ingested refused request keeps its own receipt, marked with the call it became, instead of a new one. */
  const receiptFor = (call: CallRow, receipt: ReceiptRow, callId: string) => {
    if (call.ingests === null) return insertReceipt(receipt, callId);
    if (stmts.markIngested.run({ id: call.ingests, call_id: callId }).changes === 0) {
      throw new Error(`receipt ${call.ingests} is not a refused request waiting to be ingested`);
    }
  };

  /**
   * A worker whose lease expired may still finish after another one took the delivery over as the next attempt:
   * its result is dropped, attempt row included, so the history holds each attempt number once and a late `done`
   * never overwrites the newer attempt's state. A sink's success is written once for the successes that follow one
   * another in the batch (they share its time, and the second would change nothing); an error, and a success after
   * it, are each written, in order.
   */
  function finishAttempts(finishes: readonly FinishedAttempt[]): boolean[] {
    const now = Date.now();
    let succeeded: string | undefined;
    return finishes.map(({ id, attempt, result, retryAt, pauseSinkUntil }) => {
      const state: DeliveryState = result.outcome === 'ok' ? 'done' : result.outcome === 'dead' ? 'dead' : 'pending';
      const error = result.error ?? null;
      // Bound by position, as the call's insert (commitCall).
      const finished = stmts.finish.get(state, retryAt ?? now, error, now, id, attempt) as { sink: string } | undefined;
      if (!finished) return false;
      const ok = result.outcome === 'ok';
      if (!ok || succeeded !== finished.sink) sinks.afterAttempt(finished.sink, ok, error, now, pauseSinkUntil);
      succeeded = ok ? finished.sink : undefined;
      stmts.insertAttempt.run(
        id,
        attempt,
        result.startedAt,
        result.durationMs,
        result.outcome,
        result.httpStatus ?? null,
        error,
        result.note ?? null,
      );
      return true;
    });
  }

  return {
    /**
     * docs/reference.md#deduplication: one record per (hook, dedup key). A repeat of the stored call's content is a
     * duplicate, counted on it, its receipt keeping its body; other content is a conflict, which the hook's
     * `on_conflict` makes a duplicate too, or leaves to the intake to store under its content's key (nothing written
     * here).
     */
    commitCall(call) {
      const { sinks, receipt, on_conflict } = call;
      // Positional, in the statement's column order: a rest of the row bound by name cost about 2.5 µs more a call.
      const inserted = stmts.insertCall.run(
        call.id,
        call.hook,
        call.dedup_key,
        call.content_hash,
        call.status,
        call.source,
        call.received_at,
        call.record,
        call.raw,
      );
      if (inserted.changes === 0) {
        const first = stmts.findFirst.get(call.hook, call.dedup_key) as {
          id: string;
          content_hash: string | null;
          record: string | null;
        };
        const stored = first.content_hash ?? fillContentHash(first.id, first.record!);
        if (stored !== call.content_hash && on_conflict === 'keep') return { outcome: 'conflict', id: first.id };
        stmts.countDuplicate.run(first.id);
        receiptFor(call, { ...receipt, outcome: 'duplicate' }, first.id);
        return { outcome: 'duplicate', id: first.id };
      }
      const now = Date.now();
      for (const sink of sinks) stmts.insertDelivery.run(call.id, sink, now, now, now);
      // The call's raw request holds the body and query: its receipt need not hold them again.
      receiptFor(call, { ...receipt, raw_body: null, query: null }, call.id);
      return { outcome: call.status, id: call.id };
    },

    recordReceipt: (receipt) => insertReceipt(receipt, null),

    /**
     * A held sink (paused, or waiting out a 429) gets nothing: read in the same write as the claim, so a pause
     * committed before it is always seen (docs/reference.md#what-every-sink-shares: its deliveries stay pending and
     * spend no attempt).
     */
    claimDeliveries(sink, limit, leaseMs, pausedByDefault = false) {
      const now = Date.now();
      if (heldUntil(sinks.get(sink), pausedByDefault, now) !== undefined) return [];
      const ids = stmts.claim.all({ sink, now, lease_until: now + leaseMs, limit }) as number[];
      if (ids.length === 0) return [];
      return stmts.claimed.all(JSON.stringify(ids)) as ClaimedRow[];
    },

    finishAttempt: (id, attempt, result, retryAt, pauseSinkUntil) =>
      finishAttempts([{ id, attempt, result, retryAt, pauseSinkUntil }])[0]!,
    finishAttempts,

    releaseLeases: (ids) => void stmts.release.run(JSON.stringify(ids)),

    setSinkPaused: (sink, paused) => sinks.setPaused(sink, paused, Date.now()),
    recordSinkError: (sink, error) => sinks.recordError(sink, error, Date.now()),
    recordReconcileRun: (json) => void stmts.setMeta.run(RECONCILE_RUN_KEY, json),

    ping() {
      stmts.heartbeat.run(new Date().toISOString());
      stmts.probe.run(PROBE);
      stmts.unprobe.run();
    },
  };
}

function prepareStatements(db: Database.Database) {
  return {
    insertCall: db.prepare(`
      INSERT INTO calls (id, hook, dedup_key, content_hash, status, source, received_at, record, raw)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (hook, dedup_key) DO NOTHING`),
    findFirst: db.prepare(
      'SELECT id, content_hash, CASE WHEN content_hash IS NULL THEN record END AS record FROM calls WHERE hook = ? AND dedup_key = ?',
    ),
    fillContentHash: db.prepare('UPDATE calls SET content_hash = ? WHERE id = ? AND content_hash IS NULL'),
    countDuplicate: db.prepare('UPDATE calls SET duplicates = duplicates + 1 WHERE id = ?'),
    insertDelivery: db.prepare(`
      INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES (?, ?, 'pending', ?, ?, ?)`),
    insertReceipt: db.prepare(`
      INSERT INTO receipts (hook, received_at, method, content_type, size, status, outcome, call_id, error, raw_body, query, source)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Each branch walks the (sink, state, next_attempt_at) index alone: an OR across states would scan every
    // delivery the sink ever had, done ones included, and grow slower with the history (bench/results.md).
    // Leases left by a killed process come first; then pending ones in index order, so no sort is needed.
    claim: db
      .prepare(`
      UPDATE deliveries SET state = 'in_flight', lease_until = @lease_until, attempts = attempts + 1, updated_at = @now
      WHERE id IN (
        SELECT id FROM (SELECT id FROM deliveries WHERE sink = @sink AND state = 'in_flight' AND lease_until <= @now LIMIT @limit)
        UNION ALL
        SELECT id FROM (SELECT id FROM deliveries WHERE sink = @sink AND state = 'pending' AND next_attempt_at <= @now
          ORDER BY next_attempt_at, id LIMIT @limit)
        LIMIT @limit)
      RETURNING id`)
      .pluck(),
    claimed: db.prepare(`
      SELECT d.id, d.sink, d.attempts, c.record FROM deliveries d JOIN calls c ON c.id = d.call_id
      WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.id`),
    markIngested: db.prepare(`
      UPDATE receipts SET call_id = @call_id, ingested_as = @call_id WHERE id = @id AND outcome = 'rejected' AND ingested_as IS NULL`),
    insertAttempt: db.prepare(`
      INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error, note)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    // Only the lease holder of this very attempt may move the delivery on (see finishAttempt).
    finish: db.prepare(`
      UPDATE deliveries SET state = ?, next_attempt_at = ?, lease_until = NULL, last_error = ?, updated_at = ?
      WHERE id = ? AND state = 'in_flight' AND attempts = ? RETURNING sink`),
    release: db.prepare(`
      UPDATE deliveries SET state = 'pending', lease_until = NULL, attempts = attempts - 1
      WHERE state = 'in_flight' AND id IN (SELECT value FROM json_each(?))`),
    probe: db.prepare(`INSERT INTO meta (key, value) VALUES ('probe', ?)`),
    unprobe: db.prepare(`DELETE FROM meta WHERE key = 'probe'`),
    heartbeat: db.prepare(
      `INSERT INTO meta (key, value) VALUES ('heartbeat', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ),
    setMeta: db.prepare(
      `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ),
  };
}
