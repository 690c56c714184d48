import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import type { WriterCall, WriterSettings } from './sqlite-writer.js';
import { configureConnection, runWrite, sqliteWrites } from './sqlite-writes.js';
import { answerCalls } from './thread.js';

/**
 * The SQLite store's writer thread (see sqlite-writer.ts): its own connection to the file, and the same group
 * commit the store would run in place. The writes of one message join one transaction and one fsync; each is
 * answered after its COMMIT has returned.
 */

const { path, busyTimeoutMs } = workerData as WriterSettings;
const db = new Database(path, { fileMustExist: true });
configureConnection(db, busyTimeoutMs);
const writes = sqliteWrites(db);
const write = createWriteBatcher(db);

answerCalls<WriterCall>(({ op, args }) => write(() => runWrite(writes, op, args)), () => db.close());
