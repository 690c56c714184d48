import pg from 'pg';

/**
 * One connection of the sink's pool for one piece of work. A client checked out of the pool has lost the pool's own
 * 'error' listener, and one unheard 'error' event (the server went away mid-query) would end the process, so one is
 * kept until release. A connection that failed, or whose delivery was given up (the attempt's time-out, shutdown),
 * is closed rather than returned: the pool opens a fresh one, cheaper than doubt about what the old one is in.
 */
export async function onClient<T>(
  pool: pg.Pool,
  signal: AbortSignal | undefined,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  const client = await pool.connect();
  let broken: Error | undefined;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    client.removeListener('error', onError);
    client.release(broken);
  };
  const onError = (err: Error) => void (broken ??= err);
  // The worker has stopped waiting (worker.ts races the attempt against the signal): closing the connection frees
  // its place in the pool now, rather than when a server that stopped answering is given up on by TCP. What the
  // statement did is safe either way: a delivery made again meets its row.
  const onAbort = () => {
    broken ??= new Error('the delivery was given up', { cause: signal?.reason });
    release();
  };
  client.on('error', onError);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Waiting for the connection may have taken longer than the attempt had.
    signal?.throwIfAborted();
    return await work(client);
  } catch (err) {
    // The server refused one autocommitted statement (a constraint, a type): the session is as good as before.
    // Anything else may have left it mid-message.
    if (!(err instanceof pg.DatabaseError)) broken ??= err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    release();
  }
}
