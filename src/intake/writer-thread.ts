import { workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { answerCalls } from '../store/sqlite/thread.js';
import { groupCommit } from '../store/sqlite/writer.js';
import { BUSY_TIMEOUT_MS, configureConnection } from '../store/sqlite/writes.js';
import { compileHooks } from './pipeline.js';
import { createRequestIntake } from './request.js';
import type { WriterMessage, WriterSettings } from './thread.js';

/**
 * The writer's thread (thread.ts): its own connection to the store's file, the store's group commit, and the
 * webhook intake committing through it. The messages of one turn join one transaction and one fsync; each is
 * answered after its COMMIT has returned. The thread builds its hooks from the same config as the event loop:
 * compiled parameters and filters are functions, which cannot cross to it.
 */

const { path, intake } = workerData as WriterSettings;
const db = new Database(path, { fileMustExist: true });
configureConnection(db, BUSY_TIMEOUT_MS);
const store = groupCommit(db);
const hooks = compileHooks(
  { hooks: new Map(intake.hooks), phoneRegion: intake.phoneRegion, dateOrder: intake.dateOrder },
  intake.sinks,
);
const ingest = createRequestIntake({ hooks, commit: store.commitCall });

answerCalls<WriterMessage>(
  (message) => ('ingest' in message ? ingest(message.ingest) : store.run(message)),
  () => db.close(),
);
