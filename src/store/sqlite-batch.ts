import type Database from 'better-sqlite3';

/**
 * Group commit for SQLite. With `synchronous=FULL` every commit waits for an fsync, the one cost that matters on
 * the request path; writes queued within one turn of the event loop therefore share one transaction and one fsync.
 * Each write runs in its own savepoint, so one that throws is rolled back alone and the others still commit.
 * No promise resolves before the shared COMMIT has returned: a 200 still means the record is on disk.
 */

export type Enqueue = <T>(work: () => T) => Promise<T>;

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export function createWriteBatcher(db: Database.Database, onFlush?: (size: number) => void): Enqueue {
  let queue: Pending[] = [];
  let scheduled = false;

  function flush(): void {
    scheduled = false;
    const batch = queue;
    queue = [];
    const outcomes: ({ ok: true; value: unknown } | { ok: false; err: unknown })[] = [];
    try {
      // IMMEDIATE takes the write lock up front, so two processes never deadlock upgrading a read lock.
      db.transaction(() => {
        for (const { work } of batch) {
          try {
            // A transaction inside a transaction is a savepoint in better-sqlite3: a throw undoes only this write.
            outcomes.push({ ok: true, value: db.transaction(work)() });
          } catch (err) {
            outcomes.push({ ok: false, err });
          }
        }
      }).immediate();
    } catch (err) {
      // The COMMIT itself failed (disk full, I/O error, locked): nothing of the batch is durable.
      for (const pending of batch) pending.reject(err);
      return;
    }
    onFlush?.(batch.length);
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.err);
    });
  }

  return <T>(work: () => T) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        // setImmediate runs after this turn's I/O callbacks: every request whose body arrived in it joins the batch.
        setImmediate(flush);
      }
    });
}
