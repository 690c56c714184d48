import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminApi,
  post,
  sampleCall,
  spawnServer,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

/**
 * The `rabbitmq` sink in a running receiver (docs/reference.md#queues-and-databases): at least once, every copy of a
 * call's delivery with one `message_id`, through a redeliver, a `kill -9` mid-delivery, the broker away for a while and
 * a message the broker returns as unroutable.
 */

const url = serviceUrl('amqp');
const suffix = () => randomBytes(4).toString('hex');
/** Retries a failed attempt soon, so a test waits for the broker, not for the default schedule. */
const quickRetry = { attempts: 100, schedule: ['100ms'], jitter: 0 };

describe.skipIf(!url)('the rabbitmq sink in a running receiver', () => {
  let admin: ChannelModel;
  let channel: Channel;
  const queues: string[] = [];
  const exchanges: string[] = [];
  /** Every message taken from a queue so far, by queue: a test reads them as they arrive. */
  const received = new Map<string, GetMessage[]>();

  beforeAll(async () => {
    admin = await amqp.connect(url!);
    channel = await admin.createChannel();
  });
  afterAll(async () => {
    for (const q of queues) await channel.deleteQueue(q);
    for (const x of exchanges) await channel.deleteExchange(x);
    await admin?.close();
  });

  /**
   * A queue of the test's own, made now (durable, as the sink declares it) so it can be read before the first delivery.
   */
  const queueName = async () => {
    const q = `callhook-e2e-${suffix()}`;
    queues.push(q);
    await channel.assertQueue(q, { durable: true });
    return q;
  };
  /** The messages in a queue up to now, with those taken before. */
  const messages = async (queue: string): Promise<GetMessage[]> => {
    const got = received.get(queue) ?? [];
    received.set(queue, got);
    for (let m = await channel.get(queue, { noAck: true }); m; m = await channel.get(queue, { noAck: true }))
      got.push(m);
    return got;
  };
  const idsIn = async (queue: string) => (await messages(queue)).map((m) => m.properties.messageId as string);

  describe('with a queue on the default exchange', () => {
    let server: TestServer;
    let queue: string;
    beforeAll(async () => {
      queue = await queueName();
      server = await startServer({
        config: { sinks: [{ name: 'rabbit', type: 'rabbitmq', url, queue, retry: quickRetry }] },
      });
    });
    afterAll(() => server?.close());

    it('publishes each call as a persistent JSON message with the record, and a redeliver as a second one with the same message_id', async () => {
      const ids: string[] = [];
      for (const call of [sampleCall(), sampleCall({ call_outcome: 'callback requested' })])
        ids.push(((await (await post(server.url, call)).json()) as { id: string }).id);
      await until(async () => (await idsIn(queue)).length === 2);
      for (const id of ids) {
        const message = (await messages(queue)).find((m) => m.properties.messageId === `${id}:rabbit`)!;
        const { record } = (await adminApi<{ record: unknown }>(server, `/calls/${id}`)).body;
        expect(JSON.parse(message.content.toString())).toEqual(record);
        expect(message.properties).toMatchObject({
          contentType: 'application/json',
          deliveryMode: 2,
          headers: { 'x-callhook-hook': 'end-of-call' },
        });
        expect(message.fields).toMatchObject({ exchange: '', routingKey: queue });
      }
      await adminApi(server, `/calls/${ids[0]}/redeliver`, { method: 'POST' });
      await until(async () => (await idsIn(queue)).length === 3);
      expect((await idsIn(queue)).sort()).toEqual([`${ids[0]}:rabbit`, `${ids[0]}:rabbit`, `${ids[1]}:rabbit`].sort());
    });
  });

  it('retries a message the broker returns as unroutable, never counting it delivered, until a queue takes it', async () => {
    const exchange = `callhook-e2e-x-${suffix()}`;
    exchanges.push(exchange);
    await channel.assertExchange(exchange, 'topic', { durable: false });
    const server = await startServer({
      config: {
        sinks: [
          { name: 'rabbit', type: 'rabbitmq', url, exchange, routing_key: 'calls.{{ hook }}', retry: quickRetry },
        ],
      },
    });
    try {
      const { id } = (await (await post(server.url, sampleCall())).json()) as { id: string };
      type Detail = { deliveries: { state: string }[]; attempts: { outcome: string; error?: string }[] };
      // until() returns only a truthy value.
      const detail = (await until(async (): Promise<Detail | undefined> => {
        const d = (await adminApi<Detail>(server, `/calls/${id}`)).body;
        return d.attempts.length >= 2 ? d : undefined;
      }))!;
      expect(detail.deliveries[0]!.state).not.toBe('done');
      expect(detail.attempts.every((a) => a.outcome !== 'ok')).toBe(true);
      expect(detail.attempts[0]!.error).toBe(
        `RabbitMQ returned the message as unroutable (312 NO_ROUTE): exchange "${exchange}" routes routing key "calls.end-of-call" to no queue`,
      );
      const queue = await queueName();
      await channel.bindQueue(queue, exchange, 'calls.*');
      await until(async () => (await adminApi<Detail>(server, `/calls/${id}`)).body.deliveries[0]!.state === 'done');
      expect(await idsIn(queue)).toEqual([`${id}:rabbit`]);
    } finally {
      await server.close();
    }
  });

  it('delivers every call once the broker is back after being away', async () => {
    const proxy = await startTcpProxy(url!, 5672);
    const queue = await queueName();
    const server = await startServer({
      config: { sinks: [{ name: 'rabbit', type: 'rabbitmq', url: proxy.url(url!), queue, retry: quickRetry }] },
    });
    try {
      const first = ((await (await post(server.url, sampleCall())).json()) as { id: string }).id;
      await until(async () => (await idsIn(queue)).length === 1);
      await proxy.down();
      const ids = [first];
      for (let i = 0; i < 5; i++)
        ids.push(((await (await post(server.url, sampleCall())).json()) as { id: string }).id);
      // Each call has failed at least once against the missing broker before it comes back.
      await until(async () => {
        const details = await Promise.all(
          ids.slice(1).map(async (id) => (await adminApi<{ attempts: unknown[] }>(server, `/calls/${id}`)).body),
        );
        return details.every((d) => d.attempts.length >= 1);
      });
      await proxy.up();
      await until(async () => (await idsIn(queue)).length >= ids.length);
      expect([...new Set(await idsIn(queue))].sort()).toEqual(ids.map((id) => `${id}:rabbit`).sort());
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  it('after kill -9 with messages published but their confirms not yet seen, publishes them again with the same message_id', {
    timeout: 60_000,
  }, async () => {
    const proxy = await startTcpProxy(url!, 5672);
    const queue = await queueName();
    const dataDir = tempDir();
    const config = join(dataDir, 'config.json');
    const concurrency = 8;
    writeFileSync(
      config,
      JSON.stringify({
        sinks: [{ name: 'rabbit', type: 'rabbitmq', url: proxy.url(url!), queue, concurrency, retry: quickRetry }],
      }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    try {
      const first = await spawnServer(dataDir, env);
      const warm = ((await (await post(first.url, sampleCall())).json()) as { id: string }).id;
      await until(
        async () =>
          (await adminApi<{ deliveries: { state: string }[] }>(first, `/calls/${warm}`)).body.deliveries[0]!.state ===
          'done',
      );
      // From here the broker takes every message but its confirms never reach the receiver: each delivery stays in
      // flight.
      proxy.holdReplies();
      const ids: string[] = [];
      for (let i = 0; i < 20; i++)
        ids.push(((await (await post(first.url, sampleCall())).json()) as { id: string }).id);
      await until(async () => (await idsIn(queue)).length === 1 + concurrency);
      first.child.kill('SIGKILL');
      await first.exited;
      const unconfirmed = (await idsIn(queue)).slice(1);

      proxy.passReplies();
      const second = await spawnServer(dataDir, env);
      try {
        await until(async () => (await idsIn(queue)).length >= 1 + ids.length + concurrency, { timeoutMs: 30_000 });
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
      const copies = new Map<string, string[]>();
      for (const m of await messages(queue)) {
        const { id } = JSON.parse(m.content.toString()) as { id: string };
        copies.set(id, [...(copies.get(id) ?? []), m.properties.messageId as string]);
      }
      // Each call once, and the ones whose confirms were lost twice: at least once, every copy with the call's
      // message_id.
      expect(copies.get(warm)).toEqual([`${warm}:rabbit`]);
      for (const id of ids)
        expect(copies.get(id)).toEqual(
          unconfirmed.includes(`${id}:rabbit`) ? [`${id}:rabbit`, `${id}:rabbit`] : [`${id}:rabbit`],
        );
    } finally {
      await proxy.close();
    }
  });

  it('after kill -9 mid-delivery and a restart, has every call at least once, all copies of a call with one message_id', {
    timeout: 60_000,
  }, async () => {
    const queue = await queueName();
    const dataDir = tempDir();
    const config = join(dataDir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ sinks: [{ name: 'rabbit', type: 'rabbitmq', url, queue, retry: quickRetry }] }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    const first = await spawnServer(dataDir, env);
    // The calls arrive while earlier ones are being delivered; the process dies once some, not all, are in the queue.
    const posting = Array.from({ length: 150 }, () =>
      post(first.url, sampleCall()).then(
        async (res) => (res.status === 200 ? ((await res.json()) as { id: string }).id : undefined),
        () => undefined,
      ),
    );
    await until(async () => (await channel.checkQueue(queue)).messageCount >= 10, { everyMs: 5 });
    first.child.kill('SIGKILL');
    await first.exited;
    const accepted = (await Promise.all(posting)).filter((id): id is string => id !== undefined);
    const second = await spawnServer(dataDir, env);
    try {
      const wanted = new Set(accepted.map((id) => `${id}:rabbit`));
      await until(
        async () => {
          const have = new Set(await idsIn(queue));
          return [...wanted].every((id) => have.has(id));
        },
        { timeoutMs: 30_000 },
      );
      const byCall = new Map<string, Set<string>>();
      for (const m of await messages(queue)) {
        const record = JSON.parse(m.content.toString()) as { id: string };
        byCall.set(record.id, (byCall.get(record.id) ?? new Set()).add(m.properties.messageId as string));
      }
      for (const id of accepted) expect(byCall.get(id)).toBeDefined();
      for (const [id, ids] of byCall) expect(ids).toEqual(new Set([`${id}:rabbit`]));
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
