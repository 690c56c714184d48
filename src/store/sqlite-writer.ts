import type Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import { runWrite, sqliteWrites, type SqliteWrites, type WriteOp } from './sqlite-writes.js';
import { threadClient } from './thread.js';

/**
 * Where the SQLite store writes. better-sqlite3 is synchronous: on the event loop, every insert, every COMMIT and
 * any wait for another process's lock hold up the webhook replies, and serve's one thread spends a third of its
 * time there under load (bench/results.md). A database file is therefore written by a thread of its own, on its
 * own connection, with the same group commit; the event loop reads the next requests meanwhile, and a promise
 * still resolves only after its COMMIT has returned. The thread starts with the first write, so a command that
 * only reads never starts it. An in-memory database, which no other connection can open, is written in place,
 * and so is a connection the caller opened (`inPlace`), and every write after the thread failed: a thread that
 * cannot run is not worth refusing calls for.
 */

export interface SqliteWriter {
  run<K extends WriteOp>(op: K, ...args: Parameters<SqliteWrites[K]>): Promise<ReturnType<SqliteWrites[K]>>;
  /** Waits for the writes under way, then closes the thread's connection. */
  close(): Promise<void>;
}

export interface WriterSettings {
  path: string;
  busyTimeoutMs: number;
}

export interface WriterCall {
  op: WriteOp;
  args: unknown[];
}

export function sqliteWriter(db: Database.Database, { busyTimeoutMs, inPlace = false }: { busyTimeoutMs: number; inPlace?: boolean }): SqliteWriter {
  const writes = sqliteWrites(db);
  const write = createWriteBatcher(db);
  const here = (op: WriteOp, args: unknown[]) => write(() => runWrite(writes, op, args));
  if (inPlace || db.memory) {
    return {
      run: ((op: WriteOp, ...args: unknown[]) => here(op, args)) as SqliteWriter['run'],
      // Joins the batch waiting for its turn, so it settles once that batch has.
      close: () => write(() => undefined),
    };
  }

  const thread = threadClient<WriterCall>({ thread: 'writer', besides: import.meta.url, settings: { path: db.name, busyTimeoutMs } satisfies WriterSettings, work: 'writes' });
  return {
    run: ((op: WriteOp, ...args: unknown[]) => thread.call({ op, args }) ?? here(op, args)) as SqliteWriter['run'],
    close: () => thread.close(),
  };
}
