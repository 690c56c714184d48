import { randomBytes } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, until } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { DeliveryContext, Sink } from '../sink.js';
import { rabbitmqSink } from './rabbitmq.js';

/**
 * The `rabbitmq` sink against the machine's RabbitMQ (docs/reference.md#queues-and-databases): the message's shape and
 * properties, one `message_id` for every copy, a returned (unroutable) message never counted as delivered, a missing
 * exchange, and one connection opened late, reused, opened again and closed.
 */

const url = serviceUrl('amqp');
const log = pino({ level: 'silent' });
const suffix = () => randomBytes(4).toString('hex');

const record = (overrides: Partial<CallRecord> = {}): CallRecord => ({
  id: `01J${suffix()}`,
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', call_outcome: 'order placed' },
  extra: { agent: 'v2' },
  problems: [],
  ...overrides,
});
const context = (r: CallRecord, extra: Partial<DeliveryContext> = {}): DeliveryContext => ({
  attempt: 1,
  idempotencyKey: `${r.id}:rabbit`,
  signal: new AbortController().signal,
  log,
  ...extra,
});

describe.skipIf(!url)('rabbitmq sink', () => {
  let admin: ChannelModel;
  let channel: Channel;
  const queues: string[] = [];
  const exchanges: string[] = [];
  const sinks: Sink[] = [];

  beforeAll(async () => {
    admin = await amqp.connect(url!);
    channel = await admin.createChannel();
  });
  afterAll(async () => {
    await Promise.all(sinks.map((s) => s.close?.()));
    for (const q of queues) await channel.deleteQueue(q);
    for (const x of exchanges) await channel.deleteExchange(x);
    await admin?.close();
  });

  const open = async (options: Record<string, unknown>): Promise<Sink> => {
    const sink = await rabbitmqSink.open(rabbitmqSink.options.parse({ url, ...options }), {
      name: 'rabbit',
      dataDir: '/nonexistent',
      log,
    });
    sinks.push(sink);
    return sink;
  };
  /** A name of this test's own, removed after the file. */
  const queueName = () => {
    const q = `callhook-test-${suffix()}`;
    queues.push(q);
    return q;
  };
  const exchangeName = async (type = 'topic') => {
    const x = `callhook-test-x-${suffix()}`;
    exchanges.push(x);
    await channel.assertExchange(x, type, { durable: false });
    return x;
  };
  const take = async (queue: string): Promise<GetMessage[]> => {
    const got: GetMessage[] = [];
    for (let m = await channel.get(queue, { noAck: true }); m; m = await channel.get(queue, { noAck: true }))
      got.push(m);
    return got;
  };

  it('publishes the record as a persistent JSON message with the idempotency key as message_id, to a durable queue', async () => {
    const queue = queueName();
    const sink = await open({ queue });
    const r = record();
    await sink.deliver(r, context(r));
    const [message, ...more] = await take(queue);
    expect(more).toEqual([]);
    expect(JSON.parse(message!.content.toString())).toEqual(r);
    expect(message!.fields).toMatchObject({ exchange: '', routingKey: queue });
    expect(message!.properties).toMatchObject({
      contentType: 'application/json',
      messageId: `${r.id}:rabbit`,
      deliveryMode: 2,
      headers: { 'x-callhook-hook': 'end-of-call' },
    });
    // Declared durable by the sink: declaring it otherwise is refused by the broker.
    const other = await admin.createChannel();
    other.on('error', () => undefined);
    await expect(other.assertQueue(queue, { durable: false })).rejects.toMatchObject({ code: 406 });
  });

  it('gives every attempt of a delivery the same message_id, and an edited record its :r2 id', async () => {
    const queue = queueName();
    const sink = await open({ queue });
    const r = record();
    await sink.deliver(r, context(r, { attempt: 1 }));
    await sink.deliver(r, context(r, { attempt: 2 }));
    const edited = { ...r, revision: 2, data: { ...r.data, call_outcome: 'refund' } };
    await sink.deliver(edited, context(edited, { idempotencyKey: `${r.id}:rabbit:r2` }));
    const messages = await take(queue);
    expect(messages.map((m) => m.properties.messageId)).toEqual([
      `${r.id}:rabbit`,
      `${r.id}:rabbit`,
      `${r.id}:rabbit:r2`,
    ]);
    expect(JSON.parse(messages[2]!.content.toString())).toMatchObject({
      id: r.id,
      revision: 2,
      data: { call_outcome: 'refund' },
    });
  });

  it('binds the queue to a named exchange with each routing key the template renders', async () => {
    const exchange = await exchangeName('direct');
    const queue = queueName();
    const sink = await open({ exchange, queue, routing_key: 'calls.{{ hook }}' });
    const [a, b] = [record({ hook: 'sales' }), record({ hook: 'support' })];
    await Promise.all([a, b].map((r) => sink.deliver(r, context(r))));
    const messages = await take(queue);
    expect(messages.map((m) => [m.fields.routingKey, m.properties.messageId]).sort()).toEqual(
      [
        ['calls.sales', `${a.id}:rabbit`],
        ['calls.support', `${b.id}:rabbit`],
      ].sort(),
    );
  });

  it('fails a message the broker returns as unroutable, retryably and naming exchange and routing key, and delivers it once a queue is bound', async () => {
    const exchange = await exchangeName('topic');
    const sink = await open({ exchange, routing_key: 'calls.{{ hook }}' });
    const r = record();
    const failed = await sink.deliver(r, context(r)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(RetryableError);
    expect((failed as Error).message).toBe(
      `RabbitMQ returned the message as unroutable (312 NO_ROUTE): exchange "${exchange}" routes routing key "calls.end-of-call" to no queue`,
    );
    const queue = queueName();
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, 'calls.#');
    await sink.deliver(r, context(r, { attempt: 2 }));
    expect((await take(queue)).map((m) => m.properties.messageId)).toEqual([`${r.id}:rabbit`]);
  });

  it('declares its queue again after it was deleted while the sink ran: the retry of the returned message is delivered', async () => {
    const queue = queueName();
    const sink = await open({ queue });
    const [r1, r2] = [record(), record()];
    await sink.deliver(r1, context(r1));
    await channel.deleteQueue(queue); // as rabbitmqctl delete_queue would
    const failed = await sink.deliver(r2, context(r2)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(RetryableError);
    expect((failed as Error).message).toMatch(/unroutable \(312 NO_ROUTE\)/);
    await sink.deliver(r2, context(r2, { attempt: 2 }));
    expect((await channel.checkQueue(queue)).queue).toBe(queue);
    expect(
      (await take(queue)).map((m) => [m.properties.messageId, m.properties.headers?.['x-callhook-attempt']]),
    ).toEqual([[`${r2.id}:rabbit`, 2]]);
  });

  it('declares and binds its queue again on a named exchange after it was deleted while the sink ran', async () => {
    const exchange = await exchangeName('direct');
    const queue = queueName();
    const sink = await open({ exchange, queue, routing_key: 'calls.{{ hook }}' });
    const [r1, r2] = [record(), record()];
    await sink.deliver(r1, context(r1));
    await channel.deleteQueue(queue);
    await expect(sink.deliver(r2, context(r2))).rejects.toThrow(
      /unroutable \(312 NO_ROUTE\): exchange "callhook-test-x-/,
    );
    await sink.deliver(r2, context(r2, { attempt: 2 }));
    expect((await take(queue)).map((m) => [m.fields.routingKey, m.properties.messageId])).toEqual([
      ['calls.end-of-call', `${r2.id}:rabbit`],
    ]);
  });

  it('fails a message to no queue on the default exchange, retryably', async () => {
    const sink = await open({ routing_key: `callhook-test-nowhere-${suffix()}` });
    const r = record();
    await expect(sink.deliver(r, context(r))).rejects.toThrow(
      /unroutable \(312 NO_ROUTE\): the default exchange routes routing key "callhook-test-nowhere-/,
    );
  });

  it('fails a message the broker nacks, retryably, and never counts it delivered: a full queue that rejects publishes', async () => {
    // x-overflow reject-publish: once the queue holds x-max-length messages, the broker nacks each new publish
    // (https://www.rabbitmq.com/docs/maxlength#overflow-behaviour). The sink publishes on the default exchange to it.
    const queue = queueName();
    await channel.assertQueue(queue, {
      durable: true,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    const sink = await open({ routing_key: queue });
    const [r1, r2] = [record(), record()];
    await sink.deliver(r1, context(r1));
    const failed = await sink.deliver(r2, context(r2)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(RetryableError);
    expect((failed as Error).message).toMatch(/nack/i);
    // Room again: the retry is confirmed, and the queue holds each message once.
    const first = await channel.get(queue, { noAck: true });
    expect(first === false ? undefined : first.properties.messageId).toBe(`${r1.id}:rabbit`);
    await sink.deliver(r2, context(r2, { attempt: 2 }));
    const second = await channel.get(queue, { noAck: true });
    expect(second === false ? undefined : second.properties.messageId).toBe(`${r2.id}:rabbit`);
    expect(await channel.get(queue, { noAck: true })).toBe(false);
  });

  it('keeps concurrent deliveries apart: only the returned one fails', async () => {
    const exchange = await exchangeName('direct');
    const queue = queueName();
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, 'calls.routed');
    const sink = await open({ exchange, routing_key: 'calls.{{ hook }}' });
    const records = Array.from({ length: 40 }, (_, i) => record({ hook: i % 4 === 0 ? 'lost' : 'routed' }));
    const results = await Promise.allSettled(records.map((r) => sink.deliver(r, context(r))));
    const failedIds = records.filter((_, i) => results[i]!.status === 'rejected').map((r) => r.id);
    expect(failedIds.sort()).toEqual(
      records
        .filter((r) => r.hook === 'lost')
        .map((r) => r.id)
        .sort(),
    );
    expect((await take(queue)).map((m) => m.properties.messageId).sort()).toEqual(
      records
        .filter((r) => r.hook === 'routed')
        .map((r) => `${r.id}:rabbit`)
        .sort(),
    );
  });

  it("fails for good with the broker's message on a missing exchange, and connects again for the next delivery", async () => {
    const exchange = `callhook-test-x-${suffix()}`;
    const sink = await open({ exchange, routing_key: 'calls' });
    const r = record();
    const failed = await sink.deliver(r, context(r)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(PermanentError);
    expect((failed as Error).message).toContain(`NOT_FOUND - no exchange '${exchange}'`);
    // The exchange made, the sink opens a new channel and delivers; deleted under it, the publish fails for good.
    exchanges.push(exchange);
    await channel.assertExchange(exchange, 'direct', { durable: false });
    const queue = queueName();
    await channel.assertQueue(queue, { durable: false });
    await channel.bindQueue(queue, exchange, 'calls');
    await sink.deliver(r, context(r, { attempt: 2 }));
    await channel.deleteExchange(exchange);
    await expect(sink.deliver(r, context(r, { attempt: 3 }))).rejects.toThrow(PermanentError);
    await channel.assertExchange(exchange, 'direct', { durable: false });
    await channel.bindQueue(queue, exchange, 'calls');
    await sink.deliver(r, context(r, { attempt: 4 }));
    expect((await take(queue)).map((m) => m.properties.headers?.['x-callhook-attempt'])).toEqual([2, 4]);
  });

  it('connects on the first delivery, reuses one connection, connects again after the broker was away, and closes', async () => {
    const proxy = await startTcpProxy(url!, 5672);
    try {
      const queue = queueName();
      const sink = await open({ url: proxy.url(url!), queue });
      expect(proxy.connections).toBe(0);
      const records = Array.from({ length: 20 }, () => record());
      await Promise.all(records.map((r) => sink.deliver(r, context(r))));
      expect(proxy.connections).toBe(1);
      await proxy.down();
      const r = record();
      const failed = await sink.deliver(r, context(r)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failed).toBeInstanceOf(RetryableError);
      expect((failed as Error).message).not.toContain('guest:guest');
      await proxy.up();
      await sink.deliver(r, context(r, { attempt: 2 }));
      expect(proxy.connections).toBe(1);
      await sink.close?.();
      await until(() => proxy.connections === 0);
      expect((await take(queue)).map((m) => m.properties.messageId).sort()).toEqual(
        [...records, r].map((x) => `${x.id}:rabbit`).sort(),
      );
    } finally {
      await proxy.close();
    }
  });

  it("starts with no broker at all, and says why its deliveries fail without the URL's password", async () => {
    const port = await closedPort();
    const sink = await open({ url: `amqp://callhook:pw-s3cret@127.0.0.1:${port}` });
    const r = record();
    const failed = await sink.deliver(r, context(r)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(RetryableError);
    expect((failed as Error).message).toMatch(/^RabbitMQ connecting: .*ECONNREFUSED/);
    expect((failed as Error).message).not.toContain('pw-s3cret');
  });
});
