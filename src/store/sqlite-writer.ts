import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import { sqliteWrites, type SqliteWrites } from './sqlite-writes.js';
import { startThread, threadFailure, warnThreadFailed } from './thread.js';

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

export type WriteOp = keyof SqliteWrites;

export interface SqliteWriter {
  run<K extends WriteOp>(op: K, ...args: Parameters<SqliteWrites[K]>): Promise<ReturnType<SqliteWrites[K]>>;
  /** Waits for the writes under way, then closes the thread's connection. */
  close(): Promise<void>;
}

export interface WriterSettings {
  path: string;
  busyTimeoutMs: number;
}

export interface Write {
  id: number;
  op: WriteOp;
  args: unknown[];
}
export type WriterRequest = { writes: Write[] } | { close: true };
export type WriteResult = { id: number; value: unknown } | { id: number; error: { message: string; code?: unknown } };
export type WriterReply = { results: WriteResult[] };

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

type Op = (...args: unknown[]) => unknown;

export function sqliteWriter(db: Database.Database, { busyTimeoutMs, inPlace = false }: { busyTimeoutMs: number; inPlace?: boolean }): SqliteWriter {
  const writes = sqliteWrites(db);
  const write = createWriteBatcher(db);
  const here = (op: WriteOp, args: unknown[]) => write(() => (writes[op] as Op)(...args));
  if (inPlace || db.memory) {
    return {
      run: ((op: WriteOp, ...args: unknown[]) => here(op, args)) as SqliteWriter['run'],
      // Joins the batch waiting for its turn, so it settles once that batch has.
      close: () => write(() => undefined),
    };
  }

  const waiting = new Map<number, Waiting>();
  let thread: Worker | undefined;
  let exited: Promise<void> | undefined;
  let broken = false;
  let next = 0;
  const underWay = new Set<Promise<unknown>>();
  let outbox: Write[] = [];
  const post = () => {
    const batch = outbox;
    outbox = [];
    thread?.postMessage({ writes: batch } satisfies WriterRequest);
  };

  const start = (): Worker => {
    const settings: WriterSettings = { path: db.name, busyTimeoutMs };
    const w = startThread('sqlite-writer-thread', import.meta.url, settings);
    // An idle writer does not keep the process alive; a write waiting for its commit does.
    w.unref();
    w.on('message', ({ results }: WriterReply) => {
      for (const result of results) {
        const pending = waiting.get(result.id);
        waiting.delete(result.id);
        if ('error' in result) pending?.reject(Object.assign(new Error(result.error.message), { code: result.error.code }));
        else pending?.resolve(result.value);
      }
      if (waiting.size === 0) w.unref();
    });
    // Whether these writes were committed before the thread died is unknown: they are refused (a 503 for a call),
    // never acknowledged, and the writes after them are made in place.
    const stop = (err: Error) => {
      if (!broken) warnThreadFailed(err, 'writes are made on the event loop from now on');
      broken = true;
      thread = undefined;
      outbox = [];
      for (const pending of waiting.values()) pending.reject(err);
      waiting.clear();
    };
    w.on('error', (err) => stop(threadFailure('writer', err)));
    exited = new Promise((resolve) => w.once('exit', (code) => (stop(new Error(`the SQLite writer thread stopped (exit code ${code})`)), resolve())));
    return w;
  };

  const onThread = (thread: Worker, op: WriteOp, args: unknown[]) => {
    const written = new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      if (waiting.size === 1) thread.ref();
      // The writes of one turn travel in one message: a message between threads costs about what an insert does.
      outbox.push({ id, op, args });
      if (outbox.length === 1) setImmediate(post);
    });
    underWay.add(written);
    const done = () => void underWay.delete(written);
    written.then(done, done);
    return written;
  };

  return {
    run: ((op: WriteOp, ...args: unknown[]) => {
      if (!broken) {
        try {
          thread ??= start();
        } catch (err) {
          // e.g. run from the sources without tsx to load the thread's module
          warnThreadFailed(threadFailure('writer', err), 'writes are made on the event loop');
          broken = true;
        }
      }
      return thread && !broken ? onThread(thread, op, args) : here(op, args);
    }) as SqliteWriter['run'],
    async close() {
      const w = thread;
      broken = true;
      if (!w) return;
      await Promise.allSettled(underWay);
      w.ref();
      w.postMessage({ close: true } satisfies WriterRequest);
      await exited;
    },
  };
}
