import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';

/**
 * Rows changed per transaction by a bulk write on the store's connection (purge, retry). SQLite has one writer:
 * one statement over months of calls held the lock for seconds (a purge of 200,000 calls: 2.7 s; a retry of
 * 100,000 dead deliveries: 240 ms, with the event loop blocked all along), longer than the writer thread waits for
 * it, and calls arriving meanwhile were refused. A chunk holds it for about a millisecond.
 */
export const CHUNK = 500;

/**
 * How a bulk write shares the write lock with intake: the rows a transaction may change, and how long the lock is then
 * left free, as a multiple of how long the chunk held it.
 */
export interface Pace {
  rows: number;
  rest: number;
}

/** An operator's bulk write (purge, retry), which someone waits for: half the lock's time, `CHUNK` rows at once. */
export const BULK: Pace = { rows: CHUNK, rest: 1 };

/**
 * The retention's, which nobody waits for, every few minutes beside intake (docs/reference.md#retention): chunks a
 * fifth as long, and three times their length left free after each. Deleting 100,000 calls at BULK's pace raised
 * intake's p99 at 500 req/s from 12 to 68 ms (p50 from 4.6 to 16.5) for the pass's 11.5 s; at this pace 15 to 22 ms
 * (p50 4.4 to 5.9) for its 33 s (docs/performance.md).
 */
export const BACKGROUND: Pace = { rows: 100, rest: 3 };

/**
 * Runs `chunk` in a transaction of its own until it changes fewer than `pace.rows` rows, leaving the lock free between
 * two chunks `pace.rest` times as long as the last one held it, so the writer thread's commits get their turn. `chunk`
 * gets the most rows it may change; `onChunk` is told how many it did. Returns the rows changed in all.
 */
export async function inChunks(
  db: Database.Database,
  chunk: (limit: number) => number,
  onChunk?: (changed: number) => void,
  { rows, rest }: Pace = BULK,
): Promise<number> {
  let total = 0;
  for (;;) {
    const started = performance.now();
    const done = tryWriteTransaction(db, () => chunk(rows)) ?? (await inWriteTransaction(db, () => chunk(rows)));
    const changed = done.value;
    total += changed;
    onChunk?.(changed);
    if (changed < rows) return total;
    await sleep(Math.max(1, rest * (performance.now() - started)));
  }
}

/**
 * Runs `work` in a transaction that holds the write lock (BEGIN IMMEDIATE), waiting for the lock without blocking the
 * thread. SQLite's own busy handler waits by sleeping the thread: on the event loop, behind the writer thread's stream
 * of commits (each holding the lock for its fsync), its growing sleeps kept missing the gaps between them and froze
 * every reply for seconds (a retention pass under 500 req/s, docs/performance.md). Here the lock is tried at once, and
 * while another connection holds it the event loop is free for a millisecond before the next try, up to the
 * connection's busy timeout, after which SQLITE_BUSY is thrown as SQLite would have. Only the BEGIN is tried again:
 * `work` runs once, inside the lock.
 */
export async function inWriteTransaction<T>(db: Database.Database, work: () => T): Promise<{ value: T }> {
  const deadline = performance.now() + (db.pragma('busy_timeout', { simple: true }) as number);
  for (;;) {
    const done = tryWriteTransaction(db, work, performance.now() >= deadline);
    if (done) return done;
    await sleep(1);
  }
}

/**
 * `work` in a write transaction now, or undefined when another connection holds the write lock (thrown as SQLITE_BUSY
 * when `last`).
 */
function tryWriteTransaction<T>(db: Database.Database, work: () => T, last = false): { value: T } | undefined {
  const timeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    if (!last && String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return undefined;
    throw err;
  } finally {
    db.pragma(`busy_timeout = ${timeoutMs}`);
  }
  try {
    const value = work();
    db.exec('COMMIT');
    return { value };
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw err;
  }
}
