import type Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import { lazySync, runWrite, sqliteWrites, type SqliteWrites, type WriteOp } from './sqlite-writes.js';
import { threadClient } from './thread.js';
import type { CommitInput, CommitResult } from './store.js';

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
  /** The extension's answer on the thread; undefined without one, or when the thread cannot take it. */
  toExtension(request: unknown): Promise<unknown> | undefined;
  /** Waits for the writes under way, then closes the thread's connection. */
  close(): Promise<void>;
}

/**
 * Work the writer's thread runs beside its group commit: a module it loads by URL, so the store knows nothing of
 * what the work is. Webhook intake is one (http/request-intake.ts): a request parsed and normalised on the thread
 * that commits it leaves the event loop only HTTP to do, and its commit still joins the batch of its turn.
 */
export interface WriterExtension {
  /** The module's URL; it exports `extendWriter`. */
  module: string;
  /** Plain data, as it crosses to the thread. */
  settings: unknown;
}

/** What an extension module exports: given its settings and the thread's commit, what answers each request. */
export type ExtendWriter = (settings: unknown, commit: (input: CommitInput) => Promise<CommitResult>) => (request: unknown) => Promise<unknown>;

export interface WriterSettings {
  path: string;
  busyTimeoutMs: number;
  extension?: WriterExtension;
}

export type WriterCall = { op: WriteOp; args: unknown[] } | { extension: unknown };

export function sqliteWriter(db: Database.Database, { busyTimeoutMs, inPlace = false, extension }: { busyTimeoutMs: number; inPlace?: boolean; extension?: WriterExtension }): SqliteWriter {
  const writes = sqliteWrites(db);
  const write = createWriteBatcher(db);
  const here = (op: WriteOp, args: unknown[]) => write(() => runWrite(writes, op, args), lazySync(op));
  if (inPlace || db.memory) {
    return {
      run: ((op: WriteOp, ...args: unknown[]) => here(op, args)) as SqliteWriter['run'],
      toExtension: () => undefined,
      // Joins the batch waiting for its turn, so it settles once that batch has.
      close: () => write(() => undefined),
    };
  }

  const thread = threadClient<WriterCall>({ thread: 'writer', besides: import.meta.url, settings: { path: db.name, busyTimeoutMs, extension } satisfies WriterSettings, work: 'writes' });
  return {
    run: ((op: WriteOp, ...args: unknown[]) => thread.call({ op, args }) ?? here(op, args)) as SqliteWriter['run'],
    toExtension: (request) => (extension ? thread.call({ extension: request }) : undefined),
    close: () => thread.close(),
  };
}
