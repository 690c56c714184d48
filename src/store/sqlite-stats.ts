import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { DeliveryStat } from './store.js';

/** Deliveries by sink and state; counts come from the (state, sink) index alone, only pending rows are read. */
export const DELIVERY_STATS_SQL = `
  SELECT c.sink, c.state, c.count, o.oldest AS oldestCreatedAt
  FROM (SELECT state, sink, COUNT(*) AS count FROM deliveries GROUP BY state, sink) c
  LEFT JOIN (SELECT sink, MIN(created_at) AS oldest FROM deliveries WHERE state = 'pending' GROUP BY sink) o
    ON c.state = 'pending' AND o.sink = c.sink
  ORDER BY c.sink, c.state`;

/**
 * The reader thread: plain CommonJS, so it runs as it is from the sources (tsx, vitest) and from dist alike.
 * It answers each numbered request with the rows, or with the error's message.
 */
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 2000');
const stats = db.prepare(workerData.sql);
parentPort.on('message', (id) => {
  try {
    parentPort.postMessage({ id, rows: stats.all() });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

export interface StatsReader {
  read(): Promise<DeliveryStat[]>;
  close(): Promise<void>;
}

/**
 * `/metrics` counts every delivery the store keeps: with millions of rows that is a few hundred milliseconds of
 * SQLite, and on the event loop every webhook reply would wait for it. A database file is therefore counted on a
 * read-only connection of its own, in a worker thread started at the first scrape (WAL lets it read while the
 * store writes, and it sees every commit made before the request). An in-memory database, which no other
 * connection can open, or a reader that cannot start, is counted in place.
 */
export function statsReader(db: Database.Database): StatsReader {
  const inPlace = db.prepare(DELIVERY_STATS_SQL);
  const here = async () => inPlace.all() as DeliveryStat[];
  if (db.memory) return { read: here, close: async () => undefined };

  const waiting = new Map<number, { resolve: (rows: DeliveryStat[]) => void; reject: (err: Error) => void }>();
  let worker: Worker | undefined;
  let broken = false;
  let next = 0;

  const start = (): Worker => {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(READER, { eval: true, workerData: { path: db.name, sql: DELIVERY_STATS_SQL, driver } });
    // A scrape in progress must not keep a stopping process alive.
    w.unref();
    w.on('message', ({ id, rows, error }: { id: number; rows?: DeliveryStat[]; error?: string }) => {
      const request = waiting.get(id);
      waiting.delete(id);
      if (error === undefined) request?.resolve(rows!);
      else request?.reject(new Error(error));
    });
    const stop = (err: Error) => {
      broken = true;
      worker = undefined;
      for (const request of waiting.values()) request.reject(err);
      waiting.clear();
    };
    w.on('error', stop);
    w.on('exit', (code) => stop(new Error(`the stats reader stopped (exit code ${code})`)));
    return w;
  };

  const offThread = () =>
    new Promise<DeliveryStat[]>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      (worker ??= start()).postMessage(id);
    });

  return {
    async read() {
      if (broken) return here();
      try {
        return await offThread();
      } catch {
        // A reader that cannot open the file (or died) is not worth a failed scrape: count in place from now on.
        broken = true;
        return here();
      }
    },
    async close() {
      const w = worker;
      broken = true;
      await w?.terminate();
    },
  };
}
