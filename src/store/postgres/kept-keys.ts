import pg from 'pg';
import type { KeptKeysStore } from '../store.js';

/**
 * Generated keys kept in PostgreSQL's `meta` table, one row per name (`api-keys`, `admin-token`), the keys one a line
 * as in the data dir's files (docs/reference.md#start-and-set-up: with DATABASE_URL every replica accepts the same
 * keys). No migration: `meta (key, value)` is in the first one.
 */

/** What the store's pool and a lone client both offer. */
type Queryable = Pick<pg.ClientBase, 'query'>;

export function postgresKeptKeys(db: Queryable): KeptKeysStore {
  return {
    ensure: async (name, keys) => {
      // Replicas that start together each offer keys: ON CONFLICT waits for a concurrent insert to commit, so
      // exactly one insert lands and the others read what it kept, in a statement of their own (a fresh snapshot).
      const inserted = await db.query(`INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [
        name,
        text(keys),
      ]);
      if (inserted.rowCount === 1) return { keys: [...keys], created: true };
      return { keys: (await read(db, name)) ?? [], created: false };
    },
    read: (name) => read(db, name),
    // One statement: two `keys generate` at once both land, neither overwrites the other's key.
    add: async (name, key, replace) => {
      await db.query(
        `INSERT INTO meta (key, value) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET value = CASE WHEN $3::boolean THEN excluded.value ELSE excluded.value || E'\\n' || meta.value END`,
        [name, key, replace],
      );
    },
  };
}

/**
 * For commands that only read a key (simulate, replay, `keys show`, `config check`): a lone connection, and no
 * migration run on the way, so reading a key never changes the database's schema under running replicas.
 */
export async function withPostgresKeptKeys<T>(url: string, work: (kept: KeptKeysStore) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined); // a server that goes away fails the query, not the process
  await client.connect();
  try {
    return await work(postgresKeptKeys(client));
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function read(db: Queryable, name: string): Promise<string[] | undefined> {
  try {
    const { rows } = await db.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [name]);
    return rows[0] === undefined ? undefined : lines(rows[0].value);
  } catch (err) {
    // 42P01, undefined_table: no serve has migrated this database yet, so no key is kept in it.
    if ((err as { code?: unknown }).code === '42P01') return undefined;
    throw err;
  }
}

function text(keys: readonly string[]): string {
  return keys.join('\n');
}

function lines(value: string): string[] {
  return value
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}
