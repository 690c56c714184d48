import { z } from 'zod';
import { durationSchema } from '../../duration.js';
import type { CallRecord } from '../../record.js';
import { DEFAULT_RETRY_POLICY } from '../policy.js';
import { hostAndPort } from '../shared/address.js';
import { lazyConnection } from '../shared/lazy-connection.js';
import { defineSinkType } from '../sink.js';
import { appendOnce } from './append-once.js';
import { type Connection, openConnection, stillAnswers } from './connection.js';
import { eraseEntries } from './erase-entries.js';
import { redisError } from './redis-errors.js';

/**
 * Adds each call to a Redis stream, once (docs/reference.md#queues-and-databases, `redis-stream`): the entry and a
 * marker key `<stream>:sent:<idempotency key>` are written by one script, so a delivery made again (a crash between the
 * write and its record, a redeliver, a retry whose reply was lost) finds the marker and adds nothing, for as long as
 * the marker lives (`dedup_ttl`). An edited call has another idempotency key (`…:r2`,
 * docs/reference.md#sinks-and-delivery), and so another entry. A person's erasure deletes their records' entries and
 * markers (erase-entries.ts, docs/reference.md#erasure).
 *
 * Redis Cluster is not supported: the script's two keys must hash to one slot, which the documented key names do
 * not promise. A stream named with a hash tag (`{callhook:calls}`) puts its markers in its slot.
 */

const DAY_MS = 86_400_000;

/**
 * The longest the default retry schedule can take from the first attempt to the last: every wait at its jitter's
 * upper bound (src/sinks/policy.ts). A marker that expires sooner lets a late retry add a second entry.
 */
const DEFAULT_RETRY_SPAN_MS = DEFAULT_RETRY_POLICY.schedule.reduce(
  (sum, wait) => sum + wait * (1 + DEFAULT_RETRY_POLICY.jitter),
  0,
);

export const redisStreamSink = defineSinkType({
  type: 'redis-stream',
  // The url's password (user info or a `password` query value) is a secret already, as in every URL (secret-values.ts).
  options: z.strictObject({
    url: z
      .url({ protocol: /^rediss?$/, error: 'url must be a redis:// or rediss:// URL' })
      .default('redis://127.0.0.1:6379'),
    stream: z.string().min(1, { error: 'stream must name a key' }).default('callhook:calls'),
    /** Trimmed approximately (`MAXLEN ~`), which Redis does by whole macro nodes, cheaply; 0 keeps every entry. */
    maxlen: z
      .number({ error: 'maxlen must be a whole number of entries' })
      .int({ error: 'maxlen must be a whole number of entries' })
      .min(0, { error: 'maxlen must be 0 (keep all) or more' })
      .default(1_000_000),
    dedup_ttl: durationSchema.refine((ms) => ms > 0, { error: 'dedup_ttl must be longer than 0' }).default(7 * DAY_MS),
  }),
  open({ url, stream, maxlen, dedup_ttl: ttlMs }, { name, log }) {
    // ioredis's own defaults for a URL without host or port.
    const where = `Redis at ${hostAndPort(url, { defaultPort: 6379, defaultHost: '127.0.0.1' })}`;
    if (ttlMs < DEFAULT_RETRY_SPAN_MS) {
      // Only warned: the sink cannot see its own `retry`, which may well be shorter than the default.
      log.warn(
        { sink: name, dedupTtlMs: ttlMs, defaultRetrySpanMs: DEFAULT_RETRY_SPAN_MS },
        'dedup_ttl is shorter than the default retry schedule: a retry after it may add a second entry',
      );
    }
    const connections = lazyConnection<Connection>({
      open: () => openConnection(url, where, (ended) => void connections.drop(ended)),
      close: ({ client }) => client.disconnect(),
    });
    /** Runs `work` on the shared connection, failing as a delivery does. */
    const onConnection = async <T>(signal: AbortSignal, work: (connection: Connection) => Promise<T>): Promise<T> => {
      const connection = await connections.get();
      // An attempt that timed out may be stuck on a connection that answers nothing, which the next attempt must
      // not reuse; or only on a slow reply, and then the deliveries sharing the connection are not to fail with
      // it: it is dropped only when it does not answer a PING either.
      const giveUp = () =>
        void stillAnswers(connection).then((answers) => (answers ? undefined : connections.drop(connection)));
      signal.addEventListener('abort', giveUp, { once: true });
      try {
        return await work(connection);
      } catch (err) {
        // The erasure's own check of its signal, between pages: given up, not a failure of Redis.
        if (signal.aborted && err === signal.reason) throw err;
        throw redisError(err, where, connection.lastError);
      } finally {
        signal.removeEventListener('abort', giveUp);
      }
    };
    return {
      async deliver(record, { idempotencyKey, signal, log: attemptLog }) {
        const { added, entryId } = await onConnection(signal, ({ client }) =>
          appendOnce(client, {
            stream,
            marker: `${stream}:sent:${idempotencyKey}`,
            ttlMs,
            maxlen,
            fields: entryFields(record, idempotencyKey),
          }),
        );
        if (!added) attemptLog.info({ stream, entryId }, 'already in the stream: a repeat adds nothing');
      },
      erase(recordIds, { signal }) {
        return onConnection(signal, ({ client }) => eraseEntries(client, { stream, recordIds, signal }));
      },
      async probe() {
        await connections.get();
      },
      close: () => connections.close(),
    };
  },
});

/**
 * The entry's fields (docs/reference.md#queues-and-databases: at least `id`, `hook`, `idempotency_key` and `record`),
 * with `revision` so that a consumer can tell an edited call's entry from the first without parsing the record.
 */
export function entryFields(record: CallRecord, idempotencyKey: string): [string, string][] {
  return [
    ['id', record.id],
    ['hook', record.hook],
    ['revision', String(record.revision)],
    ['idempotency_key', idempotencyKey],
    ['record', JSON.stringify(record)],
  ];
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default redisStreamSink;
