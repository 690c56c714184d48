import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import { startThread, threadFailure, warnThreadFailed } from './thread.js';

export interface ReaderSettings {
  path: string;
}
export interface ReaderRequest {
  id: number;
  sql: string;
  params?: Record<string, unknown>;
}
export type ReaderReply = { id: number; rows: unknown[] } | { id: number; error: string };

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
    const w = startThread('sqlite-reader-thread', import.meta.url, { path: db.name } satisfies ReaderSettings);
    // An idle reader does not keep the process alive; a query waiting for its rows does.
    w.unref();
    w.on('message', (reply: ReaderReply) => {
      const query = waiting.get(reply.id);
      waiting.delete(reply.id);
      if (waiting.size === 0) w.unref();
      if ('error' in reply) query?.reject(new Error(reply.error));
      else query?.resolve(reply.rows);
    });
    const stop = (err: Error) => {
      if (!broken) warnThreadFailed(err, 'reads are made on the event loop from now on');
      broken = true;
      worker = undefined;
      for (const query of waiting.values()) query.reject(err);
      waiting.clear();
    };
    w.on('error', (err) => stop(threadFailure('reader', err)));
    w.on('exit', (code) => stop(new Error(`the SQLite reader thread stopped (exit code ${code})`)));
    return w;
  };

  const offThread = <T>(sql: string, params: Record<string, unknown> | undefined) =>
    new Promise<T[]>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
      worker ??= start();
      if (waiting.size === 1) worker.ref();
      worker.postMessage({ id, sql, params } satisfies ReaderRequest);
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
