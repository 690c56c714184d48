import type Database from 'better-sqlite3';
import { perTurn } from './per-turn.js';

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync, the one cost that matters on
 * the request path; writes queued within one turn of the event loop therefore share one transaction and one fsync.
 * When a write throws, the batch is rolled back and its writes run again one transaction each, so only the
 * failing one fails. (A savepoint per write would isolate it too, but cost more than the write itself: measured
 * at 25 µs of a 70 µs commit.) No promise resolves before its COMMIT has returned: a 200 means it is on disk.
 *
 * Work enqueued with `lazySync` may commit without waiting for the disk: a batch made of such work alone commits
 * with `synchronous=NORMAL`, which WAL keeps atomic and safe from a crash of the process, and which the next FULL
 * commit's fsync makes durable with its own. Only a power cut in between can undo it.
 */

export type Enqueue = <T>(work: () => T, lazySync?: boolean) => Promise<T>;

interface Pending {
  work: () => unknown;
  lazySync: boolean;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export function createWriteBatcher(db: Database.Database, onFlush?: (size: number) => void): Enqueue {
  function flush(batch: Pending[]): void {
    const lazy = batch.every((pending) => pending.lazySync);
    if (lazy) db.pragma('synchronous = NORMAL');
    try {
      commit(batch);
    } finally {
      if (lazy) db.pragma('synchronous = FULL');
    }
  }

  function commit(batch: Pending[]): void {
    let values: unknown[];
    try {
      // IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read lock.
      values = db.transaction(() => batch.map(({ work }) => work())).immediate();
    } catch {
      // A write threw, or the COMMIT itself failed (disk full, locked): nothing of the batch is durable.
      // Each write is tried alone, so only the ones that fail on their own are refused.
      for (const pending of batch) settleAlone(pending);
      onFlush?.(batch.length);
      return;
    }
    onFlush?.(batch.length);
    for (const [i, pending] of batch.entries()) pending.resolve(values[i]);
  }

  function settleAlone({ work, resolve, reject }: Pending): void {
    try {
      resolve(db.transaction(work).immediate());
    } catch (err) {
      reject(err);
    }
  }

  const enqueue = perTurn(flush);
  return <T>(work: () => T, lazySync = false) =>
    new Promise<T>((resolve, reject) =>
      enqueue({ work, lazySync, resolve: resolve as (value: unknown) => void, reject }),
    );
}
