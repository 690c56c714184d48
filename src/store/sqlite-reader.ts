import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * The reader thread: plain CommonJS, so it runs as it is from the sources (tsx, vitest) and from dist alike. Its
 * two SQL functions are those sqliteAdmin registers on the store's connection, and must fold text the same way.
 * It answers each numbered query with the rows, or with the error's message.
 */
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 2000');
const fold = (fn) => (value) => (typeof value === 'string' ? fn(value) : value);
db.function('callhook_lower', { deterministic: true }, fold((text) => text.toLowerCase()));
db.function('callhook_fold', { deterministic: true }, fold((text) => text.trim().toLowerCase()));
const statements = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    parentPort.postMessage({ id, rows: params === undefined ? statement.all() : statement.all(params) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

export interface SqliteReader {
  /** The rows of a read-only query with named parameters, read off the event loop where it can be. */
  all<T>(sql: string, params?: Record<string, unknown>): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * The admin's lists and /metrics' counts can read a whole table: a search of a million calls, or a count of every
 * delivery, is seconds of SQLite, and on the event loop every webhook reply would wait for it, past the sender's
 * 10 s on a large enough store. A database file is therefore read on a read-only connection of its own, in a
 * worker thread started by the first such query (WAL lets it read while the store writes, and it sees every
 * commit made before the query). An in-memory database, which no other connection can open, or a reader that
 * cannot start, is read in place.
 */
export function sqliteReader(db: Database.Database): SqliteReader {
  const prepared = new Map<string, Database.Statement>();
  const here = async <T>(sql: string, params?: Record<string, unknown>): Promise<T[]> => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return (params === undefined ? statement.all() : statement.all(params)) as T[];
  };
  if (db.memory) return { all: here, close: async () => undefined };

  const waiting = new Map<number, { resolve: (rows: unknown[]) => void; reject: (err: Error) => void }>();
  let worker: Worker | undefined;
  let broken = false;
  let next = 0;

  const start = (): Worker => {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(READER, { eval: true, workerData: { path: db.name, driver } });
    // An idle reader does not keep the process alive; a query waiting for its rows does.
    w.unref();
    w.on('message', ({ id, rows, error }: { id: number; rows?: unknown[]; error?: string }) => {
      const query = waiting.get(id);
      waiting.delete(id);
      if (waiting.size === 0) w.unref();
      if (error === undefined) query?.resolve(rows!);
      else query?.reject(new Error(error));
    });
    const stop = (err: Error) => {
      broken = true;
      worker = undefined;
      for (const query of waiting.values()) query.reject(err);
      waiting.clear();
    };
    w.on('error', stop);
    w.on('exit', (code) => stop(new Error(`the reader thread stopped (exit code ${code})`)));
    return w;
  };

  const offThread = <T>(sql: string, params: Record<string, unknown> | undefined) =>
    new Promise<T[]>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      worker ??= start();
      if (waiting.size === 1) worker.ref();
      worker.postMessage({ id, sql, params });
    });

  return {
    async all<T>(sql: string, params?: Record<string, unknown>) {
      if (broken) return here<T>(sql, params);
      try {
        return await offThread<T>(sql, params);
      } catch {
        // A query the reader refused fails here too, with SQLite's own error. A reader that cannot open the file,
        // or died, is not worth a failed request: `stop` marked it broken, and queries are read in place from now on.
        return here<T>(sql, params);
      }
    },
    async close() {
      const w = worker;
      broken = true;
      await w?.terminate();
    },
  };
}
