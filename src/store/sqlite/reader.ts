import type Database from 'better-sqlite3';
import { threadClient } from './thread.js';

export interface ReaderSettings {
  path: string;
}
export interface ReaderCall {
  sql: string;
  params?: Record<string, unknown>;
}

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
  const query = queryOn(db);
  const here = async <T>(sql: string, params?: Record<string, unknown>): Promise<T[]> => query({ sql, params }) as T[];
  if (db.memory) return { all: here, close: async () => undefined };

  const thread = threadClient<ReaderCall>({
    thread: 'reader',
    module: 'reader-thread',
    besides: import.meta.url,
    settings: { path: db.name } satisfies ReaderSettings,
    work: 'reads',
  });
  return {
    async all<T>(sql: string, params?: Record<string, unknown>) {
      const asked = thread.call({ sql, params });
      if (!asked) return here<T>(sql, params);
      try {
        return (await asked) as T[];
      } catch {
        // A query the reader refused fails here too, with SQLite's own error. A reader that cannot open the file,
        // or died, is not worth a failed request: queries are read in place from now on.
        return here<T>(sql, params);
      }
    },
    close: () => thread.close(),
  };
}

/** A connection's answer to a query, each statement prepared once: in place, and on the reader thread. */
export function queryOn(db: Database.Database): (call: ReaderCall) => unknown[] {
  const prepared = new Map<string, Database.Statement>();
  return ({ sql, params }) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)));
    return params === undefined ? statement.all() : statement.all(params);
  };
}
