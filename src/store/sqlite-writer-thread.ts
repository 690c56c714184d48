import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import { configureConnection, sqliteWrites } from './sqlite-writes.js';
import type { WriteResult, WriterReply, WriterRequest, WriterSettings } from './sqlite-writer.js';

/**
 * The SQLite store's writer thread (see sqlite-writer.ts): its own connection to the file, and the same group
 * commit the store would run in place. Requests that arrive together share one transaction and one fsync; each is
 * answered after its COMMIT has returned.
 */

const { path, busyTimeoutMs } = workerData as WriterSettings;
const port = parentPort!;
const db = new Database(path, { fileMustExist: true });
configureConnection(db, busyTimeoutMs);
const writes = sqliteWrites(db);
const write = createWriteBatcher(db);

type Op = (...args: unknown[]) => unknown;

port.on('message', (request: WriterRequest) => {
  if ('close' in request) {
    // Behind the flush of every write that came before it (both wait for the same turn's setImmediate).
    setImmediate(() => {
      db.close();
      port.close();
    });
    return;
  }
  // They all join the same group commit, so they all settle in the same turn: one reply carries every result.
  void Promise.all(
    request.writes.map(({ id, op, args }) =>
      write(() => (writes[op] as Op)(...args)).then(
        (value): WriteResult => ({ id, value }),
        (err: unknown): WriteResult => ({ id, error: { message: err instanceof Error ? err.message : String(err), code: (err as { code?: unknown }).code } }),
      ),
    ),
  ).then((results) => port.postMessage({ results } satisfies WriterReply));
});
