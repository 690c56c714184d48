import Database from 'better-sqlite3';
import { ownerOnly } from '../../data-dir.js';

/**
 * Which `callhook serve` processes run on one SQLite file. A serve that starts with deliveries in flight must know
 * whose they are: a killed process's are taken back at once, a running one's are its own until their lease
 * expires. Two serves on one file happen (a second `npm start`, a rolling restart on a shared volume), and the
 * newcomer taking back the other's in-flight deliveries would send each of them twice.
 *
 * Each serve holds a shared lock on a file beside the database for as long as it runs. The OS drops it when the
 * process ends, however it ends (SIGKILL included), so nothing stale is ever left to clean up, as a PID file would
 * be (a container's PID is 1 on every start). The lock is SQLite's own, which works across processes and between
 * connections of one process alike. A serve that can take it exclusively is alone on the file.
 */

export interface ServeLock {
  /** True when no other serve ran on the file as this one joined: `whileAlone` ran. */
  alone: boolean;
  release(): void;
}

/** Long enough for another serve's `whileAlone` (one UPDATE of a few rows) to finish. */
const JOIN_TIMEOUT_MS = 10_000;

/**
 * Joins the serves of the database at `dbPath`. `whileAlone` runs only when no other serve holds the lock, and
 * while this one holds it exclusively: a serve starting meanwhile waits for it before it goes on.
 */
export function joinServes(dbPath: string, whileAlone: () => void): ServeLock {
  const path = `${dbPath}-serve.lock`;
  const lock = new Database(path);
  try {
    ownerOnly(path); // SQLite creates it 0644 under the usual umask, as it does the database (data-dir.ts)
    lock.pragma('busy_timeout = 0');
    let alone = false;
    try {
      lock.exec('BEGIN EXCLUSIVE');
      alone = true;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
    }
    if (alone) {
      try {
        whileAlone();
      } finally {
        lock.exec('COMMIT');
      }
    }
    // A read transaction holds SQLite's shared lock until it ends, here when the serve closes.
    lock.pragma(`busy_timeout = ${JOIN_TIMEOUT_MS}`);
    lock.exec('BEGIN');
    lock.prepare('SELECT count(*) FROM sqlite_master').get();
    return { alone, release: () => lock.close() };
  } catch (err) {
    lock.close();
    throw err;
  }
}
