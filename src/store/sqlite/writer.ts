import type Database from 'better-sqlite3';
import type { CommitInput, CommitResult } from '../calls.js';
import { createWriteBatcher } from './batch.js';
import { callRow } from './rows.js';
import { lazySync, runWrite, type SqliteWrites, sqliteWrites, type WriteOp } from './writes.js';

/**
 * Where the SQLite store writes. better-sqlite3 is synchronous: on the event loop, every insert, every COMMIT and
 * any wait for another process's lock hold up the webhook replies. `serve` therefore writes the database file from
 * a thread of its own (intake/thread.ts), on its own connection, with the same group commit; the event loop reads
 * the next requests meanwhile, and a promise still resolves only after its COMMIT has returned. The store hands
 * its writes to that thread when it was given one (`remote`); without one (a command, a test, an in-memory
 * database, which no other connection can open), and for every write the thread cannot take (it failed), it
 * writes in place: a thread that cannot run is not worth refusing calls for.
 */

/** One of the store's writes as a message to the thread that runs it. */
export interface StoreWrite {
  op: WriteOp;
  args: unknown[];
}

/** The thread's answer to a write; undefined when there is no thread or it cannot take the write. */
export type RemoteWrite = (write: StoreWrite) => Promise<unknown> | undefined;

export interface SqliteWriter {
  run<K extends WriteOp>(op: K, ...args: Parameters<SqliteWrites[K]>): Promise<ReturnType<SqliteWrites[K]>>;
  /** Settles once the writes made in place have. */
  close(): Promise<void>;
}

export function sqliteWriter(db: Database.Database, remote?: RemoteWrite): SqliteWriter {
  const here = groupCommit(db);
  const toThread = db.memory ? undefined : remote;
  return {
    run: ((op: WriteOp, ...args: unknown[]) =>
      toThread?.({ op, args }) ?? here.run({ op, args })) as SqliteWriter['run'],
    // Joins the batch waiting for its turn, so it settles once that batch has.
    close: () => here.close(),
  };
}

/**
 * The store's writes on one connection through its group commit (sqlite/batch.ts), as typed commits: what the
 * writer's thread runs, and what the store runs in place.
 */
export interface GroupCommit {
  commitCall(input: CommitInput): Promise<CommitResult>;
  run(write: StoreWrite): Promise<unknown>;
  close(): Promise<void>;
}

export function groupCommit(db: Database.Database): GroupCommit {
  const writes = sqliteWrites(db);
  const write = createWriteBatcher(db);
  return {
    commitCall: (input) => write(() => writes.commitCall(callRow(input))),
    run: ({ op, args }) => write(() => runWrite(writes, op, args), lazySync(op)),
    close: () => write(() => undefined),
  };
}
