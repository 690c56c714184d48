import { join } from 'node:path';
import type { Config } from '../config.js';
import { openSqliteStore } from './sqlite/store.js';
import type { RemoteWrite } from './sqlite/writer.js';
import type { Store } from './store.js';

export const SQLITE_FILE = 'callhook.db';

/** Where the SQLite store of a data dir is: the store opens it, and serve's writer thread writes it. */
export const sqlitePath = (dataDir: string): string => join(dataDir, SQLITE_FILE);

/**
 * SQLite in the data dir by default; `DATABASE_URL` switches to PostgreSQL, shared by several replicas.
 * `remote` is SQLite's writer thread, when the caller started one (intake/thread.ts); PostgreSQL needs none.
 */
export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'storeDeadlineMs'>>,
  remote?: RemoteWrite,
): Promise<Store> {
  if (config.databaseUrl) {
    // Loaded only when asked for, so a SQLite deployment never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres/store.js');
    // A commit may wait for a pooled connection as long as its reply waits for it (`store_deadline`): a shorter wait
    // refused calls whose commit would have landed in time, when a storm's commits queued for the pool.
    return openPostgresStore({ url: config.databaseUrl, connectTimeoutMs: config.storeDeadlineMs });
  }
  return openSqliteStore({ path: sqlitePath(config.dataDir), remote });
}
