import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { createWriteBatcher } from './sqlite-batch.js';
import type { ExtendWriter, WriterCall, WriterSettings } from './sqlite-writer.js';
import { callRow, configureConnection, lazySync, runWrite, sqliteWrites } from './sqlite-writes.js';
import { answerCalls } from './thread.js';

/**
 * The SQLite store's writer thread (see sqlite-writer.ts): its own connection to the file, and the same group
 * commit the store would run in place. The writes of one message join one transaction and one fsync; each is
 * answered after its COMMIT has returned. An extension, when the store was given one, runs here too, and commits
 * through the same group commit.
 */

const { path, busyTimeoutMs, extension } = workerData as WriterSettings;
const db = new Database(path, { fileMustExist: true });
configureConnection(db, busyTimeoutMs);
const writes = sqliteWrites(db);
const write = createWriteBatcher(db);
const extend = extension ? ((await import(extension.module)) as { extendWriter: ExtendWriter }).extendWriter : undefined;
const extended = extend?.(extension!.settings, (input) => write(() => writes.commitCall(callRow(input))));

answerCalls<WriterCall>(
  (call) => ('extension' in call ? extended!(call.extension) : write(() => runWrite(writes, call.op, call.args), lazySync(call.op))),
  () => db.close(),
);
