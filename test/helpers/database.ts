import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A PostgreSQL database of its own for one test file, on the server at `serverUrl`, dropped afterwards: a serve
 * pointed at it with DATABASE_URL migrates it as a new deployment would.
 */
export async function freshDatabase(
  serverUrl: string,
  prefix = 'callhook_t',
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    await admin.end();
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

export type StoreUnderTest = { env: Record<string, string>; drop(): Promise<void> };

/**
 * The stores an end-to-end test runs against, as `describe.each` rows: SQLite in the server's data dir, and, where
 * the run found PostgreSQL (`serviceUrl('postgres')`), a database of its own. `open` gives the server's env.
 */
export function storesUnderTest(
  postgresUrl: string | undefined,
  prefix: string,
): [string, () => Promise<StoreUnderTest>][] {
  const stores: [string, () => Promise<StoreUnderTest>][] = [
    ['sqlite', async () => ({ env: {}, drop: async () => {} })],
  ];
  if (postgresUrl) {
    stores.push([
      'postgres',
      async () => {
        const db = await freshDatabase(postgresUrl, prefix);
        return { env: { DATABASE_URL: db.url }, drop: db.drop };
      },
    ]);
  }
  return stores;
}
