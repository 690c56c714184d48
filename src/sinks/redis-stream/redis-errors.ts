import { PermanentError, RetryableError } from '../errors.js';

/**
 * What a Redis failure means for a delivery (docs/reference.md#queues-and-databases: "a connection error retryable", an
 * error that can never succeed permanent). Redis says what went wrong in the first word of an error reply, its code
 * (https://redis.io/docs/latest/develop/reference/protocol-spec/#simple-errors); a failure with no reply (refused,
 * reset, timed out, closed) is the network's and may succeed later.
 */

/**
 * Codes that fail the same way on every attempt until someone changes the config or the data. The rest (OOM,
 * LOADING, BUSY, READONLY during a failover, MASTERDOWN, TRYAGAIN, and codes we do not know) may pass later, and
 * retrying them costs only attempts, where a wrongly permanent error would give up a call that could have arrived.
 */
const PERMANENT: Readonly<Record<string, string>> = {
  // The stream's name is taken by a key of another type: nothing is written until it is renamed or deleted.
  WRONGTYPE:
    "the stream's key or a marker holds another type of value (rename or delete it, or set another `stream`; then retry the dead deliveries)",
  NOAUTH: 'the server wants a password that the url does not give',
  WRONGPASS: "the server refused the url's user name or password",
  NOPERM:
    "the url's user may not run EVAL, GET, XADD and SET on these keys (and, for an erasure, XRANGE, XDEL, SCAN and DEL)",
  // Redis Cluster: this sink talks to one node, and its script's two keys need one hash slot.
  MOVED: 'the server is a Redis Cluster node, and this sink talks to one Redis',
  ASK: 'the server is a Redis Cluster node, and this sink talks to one Redis',
  CROSSSLOT:
    'the server is a Redis Cluster node: the stream and its markers must share a hash slot (a stream named like {callhook:calls})',
};

/** The Redis error code of a reply error (`WRONGTYPE Operation against…`), or undefined for a failure with no reply. */
export function errorCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return undefined;
  return /^([A-Z]+)\b/.exec(err.message)?.[1];
}

/**
 * The error a delivery throws for `err`, which says where it happened (`where`: `Redis at host:port`, never the
 * URL, whose user info may hold a password). `lastError` is the connection's last own error event, which says why
 * a command found the connection closed (ioredis then rejects with only "Connection is closed.").
 */
export function redisError(err: unknown, where: string, lastError?: Error): RetryableError | PermanentError {
  const code = errorCode(err) ?? errorCode(lastError);
  const message = err instanceof Error ? err.message : String(err);
  if (code !== undefined && code in PERMANENT) {
    const said = errorCode(err) !== undefined ? message : lastError!.message;
    return new PermanentError(`${where}: ${PERMANENT[code]}: ${firstLine(said)}`, { cause: err });
  }
  const why =
    lastError && lastError.message !== message && isBareClose(message) ? `${message} (${lastError.message})` : message;
  return new RetryableError(`${where}: ${firstLine(why)}`, { cause: err });
}

/** ioredis's own words for a command that met no connection, which say nothing of why. */
function isBareClose(message: string): boolean {
  return /^Connection is closed|^Stream isn't writeable/.test(message);
}

/** Redis appends the script's name and line to an error raised inside one; the first line is the server's own. */
function firstLine(message: string): string {
  return message.split('\n')[0]!.trim();
}
