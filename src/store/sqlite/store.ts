import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { ownerOnly, prepareDataDir } from '../../data-dir.js';
import type { DeliveryState } from '../outbox.js';
import { parseReconcileRun, RECONCILE_RUN_KEY, reconcileRunJson } from '../reconcile-run.js';
import { heldUntil } from '../sink-state.js';
import type { Store } from '../store.js';
import { sqliteAdmin } from './admin.js';
import { sqliteIncidents } from './incidents.js';
import { sqliteOperators } from './operators.js';
import { perTurn } from './per-turn.js';
import { sqlitePeriod } from './period.js';
import { sqlitePrivacy } from './privacy.js';
import { sqlitePurge } from './purge.js';
import { sqliteReader } from './reader.js';
import { sqliteRetention } from './retention.js';
import { callRow, claimedDelivery, type FinishedAttempt, receiptRow } from './rows.js';
import { SQLITE_MIGRATIONS } from './schema.js';
import { joinServes, type ServeLock } from './serve-lock.js';
import { sqliteSinkStateReads } from './sink-state.js';
import { type RemoteWrite, sqliteWriter } from './writer.js';
import { BUSY_TIMEOUT_MS, configureConnection } from './writes.js';

export interface SqliteStoreOptions {
  /** A file path, or ':memory:' for tests that need no durability. */
  path: string;
  /** How long a write waits for another process's lock before the commit fails (and the reply is 503). */
  busyTimeoutMs?: number;
  /** The writer's thread, when the caller started one (intake/thread.ts); else every write is made in place. */
  remote?: RemoteWrite;
}

type Db = Database.Database;

/** Writes on the thread it is given (sqlite/writer.ts), else in place. */
export function openSqliteStore({ path, ...options }: SqliteStoreOptions): Store {
  // The data dir holds callers' personal data: readable by its owner only, whoever made it (data-dir.ts).
  if (path !== ':memory:') prepareDataDir(dirname(path));
  let db: Db | undefined;
  try {
    db = new Database(path);
    // SQLite creates a database 0644 (less what the umask takes away); its -wal, -shm and -journal files take the
    // database's mode as SQLite creates them, whatever the umask, so this comes before the first of them (the WAL
    // pragma of sqliteStoreOn).
    if (!db.memory) ownerOnly(path);
    return sqliteStoreOn(db, options);
  } catch (err) {
    db?.close();
    throw new Error(
      `cannot open the SQLite store ${path}: ${(err as Error).message}${hintFor((err as { code?: unknown }).code)}`,
      { cause: err },
    );
  }
}

/** SQLite's words for a full or unwritable disk say nothing of the disk; the operator needs the likely cause. */
function hintFor(code: unknown): string {
  if (typeof code !== 'string') return '';
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) return ' (is the disk full?)';
  if (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')) return ' (can this user write there?)';
  return '';
}

/** The store on a connection the caller opened: tests reach the connection to break it. */
export function sqliteStoreOn(
  db: Db,
  { busyTimeoutMs = BUSY_TIMEOUT_MS, remote }: Omit<SqliteStoreOptions, 'path'> = {},
): Store {
  configureConnection(db, busyTimeoutMs);
  migrate(db);

  const stmts = prepareStatements(db);
  // Every write of the request path and of the delivery worker goes through the writer's group commit.
  const writer = sqliteWriter(db, remote);
  const reader = sqliteReader(db);
  const sinkStates = sqliteSinkStateReads(db);
  let serving: ServeLock | undefined;
  // The attempts that finish in one turn (a claim's, which a batching sink settles together) go to the writer as one
  // write: one message to its thread, one sink state for the run of successes (writes.ts finishAttempts).
  const finishes = perTurn<FinishWaiting>((batch) =>
    writer
      .run(
        'finishAttempts',
        batch.map(({ finished }) => finished),
      )
      .then(
        (recorded) => {
          for (const [i, { resolve }] of batch.entries()) resolve(recorded[i]!);
        },
        (err: unknown) => {
          for (const { reject } of batch) reject(err);
        },
      ),
  );

  return {
    kind: 'sqlite',
    commitCall: (input) => writer.run('commitCall', callRow(input)),
    recordRejection: (receipt) => writer.run('recordReceipt', receiptRow(receipt, receipt.status, receipt.outcome)),
    claimDeliveries: async (sink, limit, leaseMs, pausedByDefault) =>
      (await writer.run('claimDeliveries', sink, limit, leaseMs, pausedByDefault)).map(claimedDelivery),
    finishAttempt: (id, attempt, result, retryAt, pauseSinkUntil) =>
      new Promise((resolve, reject) =>
        finishes({ finished: { id, attempt, result, retryAt, pauseSinkUntil }, resolve, reject }),
      ),
    resumeInFlight: async () => {
      if (db.memory) return { resumed: stmts.resume.run().changes, besideAnother: false };
      let resumed = 0;
      serving ??= joinServes(db.name, () => (resumed = stmts.resume.run().changes));
      return { resumed, besideAnother: !serving.alone };
    },
    releaseLeases: (ids) => writer.run('releaseLeases', ids),
    nextDueIn: async (sink, pausedByDefault = false) => {
      const now = Date.now();
      const held = heldUntil(sinkStates.get(sink), pausedByDefault, now);
      if (held === Infinity) return undefined;
      const row = stmts.nextDue.get({ sink }) as { at: number | null } | undefined;
      return row?.at == null ? undefined : Math.max(0, row.at - now, (held ?? 0) - now);
    },
    sinkStates: async () => sinkStates.all(),
    setSinkPaused: (sink, paused) => writer.run('setSinkPaused', sink, paused),
    recordSinkError: (sink, error) => writer.run('recordSinkError', sink, error),
    recordReconcileRun: (run) => writer.run('recordReconcileRun', reconcileRunJson(run)),
    // One row by its key: read in place, as the sinks' state is.
    lastReconcileRun: async () => parseReconcileRun(stmts.meta.get(RECONCILE_RUN_KEY) as string | undefined),
    countDeliveries: async () => countDeliveries(stmts),
    ...sqliteAdmin(db, reader),
    ...sqlitePeriod(db, reader),
    ...sqlitePurge(db),
    ...sqliteRetention(db, busyTimeoutMs),
    ...sqliteIncidents(db, reader),
    ...sqlitePrivacy(db, reader),
    ...sqliteOperators(db),
    // Through the writer's group commit, so readiness proves a commit (and its fsync) goes through now.
    ping: () => writer.run('ping'),
    close: async () => {
      await Promise.all([writer.close(), reader.close()]);
      db.close();
      serving?.release();
    },
  };
}

interface FinishWaiting {
  finished: FinishedAttempt;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

function migrate(db: Db): void {
  // A file a newer version migrated (a rollback, docs/deploying.md#rolling-back) is used as it is, and keeps its number:
  // lowered, it would have the newer version run its migrations again on tables it made, and stop.
  if ((db.pragma('user_version', { simple: true }) as number) >= SQLITE_MIGRATIONS.length) return;
  // A migration may change a table's schema text in place (sqlite/schema.ts, migration 4), which better-sqlite3's
  // defensive mode forbids outside unsafe mode; the schema version is then bumped, so every connection (a running
  // serve's included) reads the table anew.
  db.unsafeMode(true);
  try {
    // The version is read inside the write lock, so two processes opening a new file migrate it once.
    db.transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version >= SQLITE_MIGRATIONS.length) return;
      for (let v = version; v < SQLITE_MIGRATIONS.length; v++) db.exec(SQLITE_MIGRATIONS[v]!);
      db.pragma(`user_version = ${SQLITE_MIGRATIONS.length}`);
      db.pragma(`schema_version = ${(db.pragma('schema_version', { simple: true }) as number) + 1}`);
    }).immediate();
  } finally {
    db.unsafeMode(false);
  }
}

function prepareStatements(db: Db) {
  return {
    resume: db.prepare(`UPDATE deliveries SET state = 'pending', lease_until = NULL WHERE state = 'in_flight'`),
    nextDue: db.prepare(`SELECT MIN(at) AS at FROM (
      SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE sink = @sink AND state = 'pending'
      UNION ALL SELECT MIN(lease_until) FROM deliveries WHERE sink = @sink AND state = 'in_flight')`),
    countDeliveries: db.prepare('SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state'),
    meta: db.prepare('SELECT value FROM meta WHERE key = ?').pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function countDeliveries(stmts: Statements): Record<DeliveryState, number> {
  const counts: Record<DeliveryState, number> = { pending: 0, in_flight: 0, done: 0, dead: 0 };
  for (const row of stmts.countDeliveries.all() as { state: DeliveryState; n: number }[]) counts[row.state] = row.n;
  return counts;
}
