import { join } from 'node:path';
import type { Config } from '../config.js';
import { openSqliteStore } from './sqlite.js';
import type { WriterExtension } from './sqlite-writer.js';
import type { Store } from './store.js';

export const SQLITE_FILE = 'callhook.db';

/**
 * SQLite in the data dir by default; `DATABASE_URL` switches to PostgreSQL, shared by several replicas.
 * `extension` is work for SQLite's writer thread; PostgreSQL has none, and the caller does that work itself.
 */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>, extension?: WriterExtension): Promise<Store> {
  if (config.databaseUrl) {
    // Loaded only when asked for, so a SQLite deployment never loads the PostgreSQL driver.
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore({ url: config.databaseUrl });
  }
  return openSqliteStore({ path: join(config.dataDir, SQLITE_FILE), extension });
}
