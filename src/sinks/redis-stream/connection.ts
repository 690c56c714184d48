import { Redis } from 'ioredis';
import { APPEND_ONCE_SCRIPTS } from './append-once.js';
import { redisError } from './redis-errors.js';

/**
 * One connection to Redis, opened for a delivery (docs/reference.md#queues-and-databases: never by `create()`, so a
 * Redis that is down does not stop start-up). ioredis by default reconnects on its own, forever, and queues commands
 * while it does: a delivery would then wait for a Redis that is down until the attempt's time-out, and an attempt sent
 * twice by the client is one the worker cannot count. Here the client neither reconnects nor queues: a command that
 * finds no connection fails at once, the connection is given up (`onEnd`), and the outbox's retry schedule
 * (src/delivery/backoff.ts) decides when the next attempt opens another.
 */

/** ioredis's default too; a Redis behind a dropped route would otherwise take the system's minutes to refuse. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long a connection has, once an attempt on it was given up, to answer a PING before it is taken for broken. A
 * PING waits behind the commands sent before it (Redis answers one client in order), so a connection whose server
 * stopped answering never answers it, and one that was only slow does once the slow command is done.
 */
const ANSWER_WITHIN_MS = 5_000;

export interface Connection {
  client: Redis;
  /** The client's last error event: why the connection closed, when a command learns only that it did. */
  lastError: Error | undefined;
  /** The PING in flight that asks whether the connection still answers, shared by the attempts given up at once. */
  asking?: Promise<boolean>;
}

export async function openConnection(
  url: string,
  where: string,
  onEnd: (connection: Connection) => void,
): Promise<Connection> {
  const client = new Redis(url, {
    // Opened by connect() below, so a connection failure is this delivery's, with its reason.
    lazyConnect: true,
    // A command sent while there is no connection is refused at once, not held until one comes.
    enableOfflineQueue: false,
    // No reconnection of its own (retryStrategy: null means "stop"), and so no command resent by it.
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Sent by EVALSHA, and by EVAL when the server does not know it yet (NOSCRIPT): after a restart, a SCRIPT
    // FLUSH, or on a new connection (ioredis Script.ts).
    scripts: APPEND_ONCE_SCRIPTS,
  });
  const connection: Connection = { client, lastError: undefined };
  // An error event with no listener would be printed by ioredis; the delivery that meets it reports it instead.
  client.on('error', (err: Error) => {
    connection.lastError = err;
  });
  try {
    await client.connect();
  } catch (err) {
    // A refused password (WRONGPASS, NOAUTH) comes as an error event; connect() says only that the connection closed.
    client.disconnect();
    throw redisError(err, where, connection.lastError);
  }
  client.once('end', () => onEnd(connection));
  return connection;
}

/**
 * Whether the connection still answers, after an attempt on it was given up (its time-out): the attempt's own
 * end says nothing of the connection, which the other deliveries in flight share, so only one that cannot answer
 * a PING in time is given up with it.
 */
export function stillAnswers(connection: Connection): Promise<boolean> {
  connection.asking ??= answersWithin(connection.client, ANSWER_WITHIN_MS).finally(
    () => (connection.asking = undefined),
  );
  return connection.asking;
}

async function answersWithin(client: Redis, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([
      client.ping().then(
        () => true,
        () => false,
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
