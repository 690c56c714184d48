import type pg from 'pg';

/** How the PostgreSQL store's modules talk to the pool: checked-out clients, transactions, text it can hold. */

/**
 * A client checked out of the pool has lost the pool's own 'error' listener; one unheard 'error' event (the server
 * went away mid-transaction) would kill the process, so this one is kept until release. After any failure the
 * session may be mid-transaction or gone: it is discarded, as a fresh connection is cheaper than doubt.
 */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => void (broken ??= err);
  client.on('error', onError);
  try {
    return await work(client);
  } catch (err) {
    broken ??= err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * No ROLLBACK on failure: withClient closes the connection, and PostgreSQL rolls back what it held. A ROLLBACK sent
 * after a query that timed out would only wait behind it for a time-out of its own.
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  });
}

/** PostgreSQL text cannot hold U+0000; error messages may quote hostile input, so it is written escaped. */
export function pgText(text: string): string;
export function pgText(text: string | undefined): string | null;
export function pgText(text: string | undefined): string | null {
  return text === undefined ? null : text.replaceAll('\u0000', '\\u0000');
}
