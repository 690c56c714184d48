import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { queryOn, type ReaderCall, type ReaderSettings } from './reader.js';
import { registerTextFunctions } from './text.js';
import { answerCalls } from './thread.js';
import { BUSY_TIMEOUT_MS } from './writes.js';

/** The SQLite store's reader thread (see sqlite/reader.ts): answers each query with its rows, or its error. */

const { path } = workerData as ReaderSettings;
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
registerTextFunctions(db);

answerCalls<ReaderCall>(queryOn(db), () => db.close());
