import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { RetryableError } from '../errors.js';
import { type LazyConnection, lazyConnection } from '../shared/lazy-connection.js';

/**
 * The nats sink's one connection (docs/reference.md#queues-and-databases): opened on the first delivery, never at
 * start-up, so a server that is down does not stop callhook; reused; opened again on the next delivery after the client
 * closed it; drained by close(). While it is disconnected the client reconnects on its own, and `lost` is aborted so
 * that a publish fails at once instead of waiting in the client's buffer: the outbox worker's schedule does the
 * retrying.
 */

/** The handshake's deadline (the client's default is 20 s, longer than an attempt should hang on a dead host). */
const CONNECT_TIMEOUT_MS = 5_000;
/** Between reconnect attempts (client default 2 s); the client adds up to 100 ms of jitter. */
const RECONNECT_WAIT_MS = 1_000;
/** close() gives draining this long, then closes: a server that is gone cannot answer a drain. */
const DRAIN_TIMEOUT_MS = 5_000;

export interface Link {
  nc: NatsConnection;
  js: JetStreamClient;
  /** Aborted, with a RetryableError as its reason, while the connection is down. */
  lost: AbortSignal;
  /** Kept by the sink: its stream looked up (and made if missing) on this connection, once for all deliveries. */
  stream?: Promise<void>;
}

export interface ConnectionOptions {
  servers: string[];
  token?: string;
  user?: string;
  pass?: string;
  /** Shown by the server's monitoring (`nats server report connections`). */
  name: string;
  /** For the addresses in messages; the URLs' credentials are left out. */
  where: string;
  log: Logger;
}

/**
 * One connection, opened lazily and reopened after the client gave it up (shared/lazy-connection.ts); the
 * status of an open one is followed, so that `lost` says at once when it is down.
 */
export function natsConnection(options: ConnectionOptions): LazyConnection<Link> {
  const lazy: LazyConnection<Link> = lazyConnection({
    open: () => openLink(options, (link) => void lazy.drop(link)),
    close: drain,
  });
  return lazy;
}

async function openLink(
  { servers, token, user, pass, name, log, where }: ConnectionOptions,
  onClosed: (link: Link) => void,
): Promise<Link> {
  const nc = await connect({
    servers,
    name,
    ...(token !== undefined ? { token } : {}),
    ...(user !== undefined ? { user, pass } : {}),
    timeout: CONNECT_TIMEOUT_MS,
    // Reconnecting stays on and never gives up while callhook runs; deliveries meanwhile fail at once (`lost`).
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
  });
  let down = new AbortController();
  const link: Link = { nc, js: jetstream(nc), lost: down.signal };
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        log.warn({ where }, 'nats sink: connection lost, reconnecting');
        down.abort(new RetryableError(`NATS at ${where}: connection lost, the client is reconnecting`));
      } else if (status.type === 'reconnect') {
        log.info({ where }, 'nats sink: reconnected');
        down = new AbortController();
        link.lost = down.signal;
      }
    }
  })().catch(() => {});
  void nc.closed().then(() => {
    down.abort(new RetryableError(`NATS at ${where}: connection closed`));
    // The next delivery opens another (after a server refused to take the client back, say).
    onClosed(link);
  });
  return link;
}

/** Drains (lets the publishes in flight be answered), then closes; a server that is gone cannot answer a drain. */
async function drain({ nc }: Link): Promise<void> {
  if (nc.isClosed()) return;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS)));
  await Promise.race([nc.drain().catch(() => {}), deadline]);
  clearTimeout(timer);
  if (!nc.isClosed()) await nc.close();
}

/**
 * `start()`, or the connection's loss, whichever comes first: a request made while the client reconnects would
 * wait in its buffer until its time-out, and the outbox's schedule, not the client, is what retries a delivery.
 */
export function whileConnected<T>(start: () => Promise<T>, link: Link): Promise<T> {
  const lost = link.lost;
  if (lost.aborted)
    return Promise.reject(lost.reason instanceof Error ? lost.reason : new RetryableError('NATS connection lost'));
  return new Promise<T>((resolve, reject) => {
    const onLost = () => reject(lost.reason);
    lost.addEventListener('abort', onLost, { once: true });
    start()
      .then(resolve, reject)
      .finally(() => lost.removeEventListener('abort', onLost));
  });
}
