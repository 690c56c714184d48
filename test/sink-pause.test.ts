import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from './helpers/database.js';
import { natsAdmin } from './helpers/nats-stream.js';
import { adminApi, deliveryStates, post, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * Pause, restart and resume for each queue and database sink against its real server
 * (docs/reference.md#what-every-sink-shares): a pause made through the admin API holds across a restart of serve,
 * nothing reaches the server meanwhile and no attempt is spent, and a resume delivers every call once.
 */

/** A target of the sink's own on the machine's server: its config entry, and the idempotency keys it holds now. */
interface Target {
  sink: Record<string, unknown>;
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

const suffix = () => randomBytes(5).toString('hex');
/** The downstream's answer while it has nothing yet (a table or a stream the sink has not made). */
const noneYet = <T>(read: () => Promise<T[]>) => read().catch(() => [] as T[]);

const targets: [string, string | undefined, (url: string) => Promise<Target>][] = [
  [
    'postgres',
    serviceUrl('postgres'),
    async (url) => {
      const db = await freshDatabase(url, 'callhook_pause');
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      return {
        sink: { type: 'postgres', url: db.url },
        keys: () =>
          noneYet(async () =>
            (await client.query<{ id: string }>('SELECT id FROM callhook_calls')).rows.map((r) => `${r.id}:events`),
          ),
        close: async () => {
          await client.end();
          await db.drop();
        },
      };
    },
  ],
  [
    'redis-stream',
    serviceUrl('redis'),
    async (url) => {
      const redis = new Redis(url);
      const stream = `callhook-pause:${suffix()}`;
      return {
        sink: { type: 'redis-stream', url, stream },
        keys: async () =>
          (await redis.xrange(stream, '-', '+')).map(([, fields]) => fields[fields.indexOf('idempotency_key') + 1]!),
        close: async () => {
          await redis.del(stream, ...(await redis.keys(`${stream}:*`)));
          redis.disconnect();
        },
      };
    },
  ],
  [
    'nats',
    serviceUrl('nats'),
    async (url) => {
      const nats = await natsAdmin(url);
      const { stream, prefix } = nats.unique();
      nats.forget(stream);
      return {
        sink: { type: 'nats', servers: url, subject: `${prefix}.{{ hook }}`, stream },
        keys: () => noneYet(async () => (await nats.messages(stream)).map((m) => m.msgId!)),
        close: () => nats.close(),
      };
    },
  ],
  [
    'rabbitmq',
    serviceUrl('amqp'),
    async (url) => {
      const connection = await amqp.connect(url);
      const channel = await connection.createChannel();
      const queue = `callhook-pause-${suffix()}`;
      await channel.assertQueue(queue, { durable: true });
      const taken: string[] = [];
      return {
        sink: { type: 'rabbitmq', url, queue },
        keys: async () => {
          for (let m = await channel.get(queue, { noAck: true }); m; m = await channel.get(queue, { noAck: true }))
            taken.push(m.properties.messageId as string);
          return [...taken];
        },
        close: async () => {
          await channel.deleteQueue(queue);
          await connection.close();
        },
      };
    },
  ],
];

describe.each(targets)('pausing the %s sink', (_type, url, make) => {
  it.skipIf(!url)(
    'keeps a pause across a restart of serve, sends nothing meanwhile, and delivers every call once on resume',
    { timeout: 60_000 },
    async () => {
      const target = await make(url!);
      const dataDir = tempDir();
      const config = join(dataDir, 'callhook.json');
      // The jsonl sink is the clock: the worker wakes every sink's loop for a call in config order, and the store
      // takes their claims in that order, so once `file` has delivered a call, `events` has been asked for its
      // delivery of it too, and refused by the pause.
      writeFileSync(
        config,
        JSON.stringify({
          sinks: [
            { name: 'events', ...target.sink },
            { name: 'file', type: 'jsonl' },
          ],
        }),
      );
      const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
      const ids: string[] = [];
      const postCall = async (server: { url: string }) => {
        const res = await post(server.url, sampleCall());
        expect(res.status).toBe(200);
        ids.push((await res.json()).id);
        await until(() => deliveryStates(dataDir, 'file').done === ids.length);
      };
      const held = async (server: { url: string }) => {
        const [sink] = (await adminApi(server, '/sinks')).body.sinks.filter(
          (s: { name: string }) => s.name === 'events',
        );
        expect(sink).toMatchObject({
          paused: true,
          paused_by: 'operator',
          deliveries: { pending: ids.length, in_flight: 0, done: 0, dead: 0 },
        });
        const deliveries = (await adminApi(server, '/deliveries?sink=events')).body.deliveries.map(
          (d: { state: string; attempts: number }) => [d.state, d.attempts],
        );
        expect(deliveries).toEqual(Array(ids.length).fill(['pending', 0]));
        expect(await target.keys()).toEqual([]);
      };

      try {
        const first = await spawnServer(dataDir, env);
        try {
          expect(await adminApi(first, '/sinks/events/pause', { method: 'POST' })).toMatchObject({
            status: 200,
            body: { paused: true },
          });
          for (let i = 0; i < 3; i++) await postCall(first);
          await held(first);
        } finally {
          first.child.kill('SIGTERM');
        }
        expect(await first.exited).toBe(0);

        const second = await spawnServer(dataDir, env);
        try {
          await postCall(second);
          await held(second);
          expect(await adminApi(second, '/sinks/events/resume', { method: 'POST' })).toMatchObject({
            status: 200,
            body: { paused: false },
          });
          await until(() => deliveryStates(dataDir, 'events').done === ids.length, { timeoutMs: 20_000 });
          expect((await target.keys()).sort()).toEqual(ids.map((id) => `${id}:events`).sort());
          expect(
            (await adminApi(second, '/deliveries?sink=events')).body.deliveries.map(
              (d: { attempts: number }) => d.attempts,
            ),
          ).toEqual([1, 1, 1, 1]);
        } finally {
          second.child.kill('SIGTERM');
          await second.exited;
        }
      } finally {
        await target.close();
      }
    },
  );
});
