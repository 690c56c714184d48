import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BACKLOG_KEY_PREFIX, BACKLOG_MARK, backlogCounter } from './backlog.js';

/**
 * Where the backlog rows' sinks write, one target of its own per run (a random suffix), and how to count what it
 * holds afterwards, so that a row cannot claim a drain that did not happen. Each target is made before `serve`
 * starts and removed after the row, also when the row fails.
 */

export interface BacklogCheck {
  /** Backlog records the target holds (intake's records, also delivered to the sink, are left out). */
  records: number;
  /** Distinct backlog records among them (a row per record id, an entry or a message per idempotency key). */
  distinct: number;
}

export interface BacklogTarget {
  /** The sink's entry in the config: its name is the one the backlog's outbox rows carry. */
  sink: { name: string; type: string } & Record<string, unknown>;
  /** For the row: what the records were counted in. */
  where: string;
  /**
   * RabbitMQ cannot drop repeats (docs/reference.md#queues-and-databases): it must hold at least one copy of each, not
   * exactly one.
   */
  atLeastOnce?: boolean;
  /** With callhook stopped: the backlog records the target holds. */
  check(): Promise<BacklogCheck>;
  /** Removes what was made outside the data dir: a database, a stream and its markers, a queue. */
  remove(): Promise<void>;
}

/** The services of this machine; `.ci/run` sets the same variables for the tests. */
export interface Services {
  postgres: string;
  redis: string;
  nats: string;
  amqp: string;
}

export function servicesFrom(env: NodeJS.ProcessEnv, postgres?: string): Services {
  return {
    postgres: postgres ?? env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    redis: env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    nats: env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    amqp: env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  };
}

export const SINK_TYPES = ['postgres', 'redis-stream', 'nats', 'rabbitmq'] as const;
export type SinkType = (typeof SINK_TYPES)[number];

const suffix = () => randomBytes(5).toString('hex');
const isBacklog = (json: string) => json.includes(BACKLOG_MARK);

/** The reference row: the JSONL file in the data dir, one line per delivery. */
export function jsonlTarget(dataDir: string): BacklogTarget {
  return {
    sink: { name: 'jsonl', type: 'jsonl' },
    where: 'lines in the JSONL file',
    async check() {
      const lines = await backlogCounter(join(dataDir, 'calls.jsonl'))();
      // A line per delivery: a repeat would be a second line, so lines and records are one count here.
      return { records: lines, distinct: lines };
    },
    remove: async () => {},
  };
}

export function openTarget(type: SinkType, services: Services): Promise<BacklogTarget> {
  switch (type) {
    case 'postgres':
      return postgresTarget(services.postgres);
    case 'redis-stream':
      return redisTarget(services.redis);
    case 'nats':
      return natsTarget(services.nats);
    case 'rabbitmq':
      return rabbitmqTarget(services.amqp);
  }
}

/** A database of its own, so the sink creates its default table as it would in production, and drops with it. */
async function postgresTarget(adminUrl: string): Promise<BacklogTarget> {
  const database = `callhook_bench_${suffix()}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  await admin((c) => c.query(`CREATE DATABASE ${database}`));
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return {
    sink: { name: 'postgres', type: 'postgres', url: url.href },
    where: `rows in table callhook_calls of a new database`,
    async check() {
      const client = new pg.Client({ connectionString: url.href });
      await client.connect();
      try {
        const { rows } = await client.query<{ records: string; distinct: string }>(
          `SELECT count(*) AS records, count(DISTINCT id) AS distinct FROM callhook_calls WHERE dedup_key LIKE $1`,
          [`${BACKLOG_KEY_PREFIX}%`],
        );
        return { records: Number(rows[0]!.records), distinct: Number(rows[0]!.distinct) };
      } catch (err) {
        if ((err as { code?: string }).code === '42P01') return { records: 0, distinct: 0 }; // never created: nothing delivered
        throw err;
      } finally {
        await client.end();
      }
    },
    remove: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A stream of its own; its marker keys (`<stream>:sent:<idempotency key>`, a week's TTL) go with it. */
async function redisTarget(url: string): Promise<BacklogTarget> {
  const stream = `callhook-bench:${suffix()}`;
  const redis = () => new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  return {
    sink: { name: 'redis-stream', type: 'redis-stream', url, stream },
    where: `entries in stream ${stream}`,
    async check() {
      const client = redis();
      await client.connect();
      try {
        let records = 0;
        const keys = new Set<string>();
        // Page by page from the start, each page after the last entry id seen.
        for (let from = '-'; ; ) {
          const page = await client.xrange(stream, from, '+', 'COUNT', 10_000);
          for (const [, flat] of page) {
            const fields = new Map<string, string>();
            for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
            if (!isBacklog(fields.get('record') ?? '')) continue;
            records++;
            keys.add(fields.get('idempotency_key') ?? '');
          }
          if (page.length < 10_000) break;
          from = `(${page.at(-1)![0]}`;
        }
        return { records, distinct: keys.size };
      } finally {
        client.disconnect();
      }
    },
    async remove() {
      const client = redis();
      await client.connect();
      try {
        await client.unlink(stream);
        for (let cursor = '0'; ; ) {
          const [next, keys] = await client.scan(cursor, 'MATCH', `${stream}:sent:*`, 'COUNT', 10_000);
          if (keys.length > 0) await client.unlink(...keys);
          if (next === '0') break;
          cursor = next;
        }
      } finally {
        client.disconnect();
      }
    },
  };
}

/** A stream of its own, which the sink creates (its `stream` option) on a subject of its own. */
async function natsTarget(servers: string): Promise<BacklogTarget> {
  const id = suffix();
  const stream = `CALLHOOK_BENCH_${id}`;
  const withNats = async <T>(work: (nc: Awaited<ReturnType<typeof connectNats>>) => Promise<T>): Promise<T> => {
    const nc = await connectNats({ servers, timeout: 5_000 });
    try {
      return await work(nc);
    } finally {
      await nc.close();
    }
  };
  return {
    sink: { name: 'nats', type: 'nats', servers, subject: `callhook-bench.${id}.{{ hook }}`, stream },
    where: `messages in stream ${stream}`,
    check: () =>
      withNats(async (nc) => {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.streams.info(stream).catch(() => undefined);
        if (!info || info.state.messages === 0) return { records: 0, distinct: 0 };
        // An ordered consumer reads the stream once from its first message, with no state left on the server.
        const consumer = await jetstream(nc).consumers.get(stream);
        const messages = await consumer.consume();
        let records = 0;
        const ids = new Set<string>();
        for await (const m of messages) {
          if (isBacklog(m.string())) {
            records++;
            ids.add(m.headers?.get('Nats-Msg-Id') ?? '');
          }
          if (m.info.streamSequence >= info.state.last_seq) break;
        }
        await messages.close();
        return { records, distinct: ids.size };
      }),
    remove: () =>
      withNats(async (nc) => void (await (await jetstreamManager(nc)).streams.delete(stream).catch(() => false))),
  };
}

/**
 * A durable queue of its own on the default exchange, which routes by queue name: the routing key is the queue's
 * name, as the sink requires there (docs/reference.md#queues-and-databases).
 */
async function rabbitmqTarget(url: string): Promise<BacklogTarget> {
  const queue = `callhook-bench-${suffix()}`;
  const withChannel = async <T>(work: (channel: amqp.Channel) => Promise<T>): Promise<T> => {
    const connection = await amqp.connect(url);
    try {
      return await work(await connection.createChannel());
    } finally {
      await connection.close();
    }
  };
  return {
    sink: { name: 'rabbitmq', type: 'rabbitmq', url, queue, routing_key: queue },
    where: `messages in queue ${queue}`,
    atLeastOnce: true,
    check: () =>
      withChannel(async (channel) => {
        const { messageCount } = await channel.checkQueue(queue);
        let records = 0;
        const ids = new Set<string>();
        let left = messageCount;
        if (left === 0) return { records, distinct: 0 };
        // Consumed and acknowledged in bulk: the queue goes at remove() anyway.
        await channel.prefetch(2_000);
        await new Promise<void>((resolve, reject) => {
          channel.on('error', reject);
          void channel.consume(queue, (m) => {
            if (!m) return reject(new Error(`queue ${queue} was cancelled while it was read`));
            if (isBacklog(m.content.toString('utf8'))) {
              records++;
              ids.add(String(m.properties.messageId));
            }
            if (--left % 1_000 === 0 || left === 0) channel.ack(m, true);
            if (left === 0) resolve();
          });
        });
        return { records, distinct: ids.size };
      }),
    remove: () => withChannel(async (channel) => void (await channel.deleteQueue(queue))),
  };
}
