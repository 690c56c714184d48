import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { ReaderReply, ReaderRequest, ReaderSettings } from './sqlite-reader.js';
import { registerTextFunctions } from './sqlite-text.js';

/** The SQLite store's reader thread (see sqlite-reader.ts): answers each numbered query with its rows, or its error. */

const { path } = workerData as ReaderSettings;
const port = parentPort!;
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 2000');
registerTextFunctions(db);
const statements = new Map<string, Database.Statement>();

port.on('message', ({ id, sql, params }: ReaderRequest) => {
  try {
    let statement = statements.get(sql);
    if (!statement) statements.set(sql, (statement = db.prepare(sql)));
    port.postMessage({ id, rows: params === undefined ? statement.all() : statement.all(params) } satisfies ReaderReply);
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies ReaderReply);
  }
});
