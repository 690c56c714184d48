import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, until } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import type { CallRecord } from '../../record.js';
import { classify, PermanentError, RetryableError } from '../errors.js';
import { resolveSinks } from '../registry.js';
import { redisStreamSink } from './redis-stream.js';

const log = pino({ level: 'silent' });
const record = (id: string, revision = 1): CallRecord => ({
  id,
  hook: 'end-of-call',
  dedup_key: `call_id:${id}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision,
  data: { first_name: 'Asha', call_duration: 184 },
  extra: { agent: 'x' },
  problems: [],
});
/** The key the worker hands a sink, as docs/reference.md#sinks-and-delivery spells it (delivery/worker.test.ts). */
const idempotencyKey = (rec: CallRecord) =>
  rec.revision > 1 ? `${rec.id}:stream:r${rec.revision}` : `${rec.id}:stream`;
const context = (rec: CallRecord, signal = new AbortController().signal) => ({
  attempt: 1,
  idempotencyKey: idempotencyKey(rec),
  signal,
  log,
});
const open = (options: Record<string, unknown>) =>
  redisStreamSink.open(redisStreamSink.options.parse(options), { name: 'stream', dataDir: '/nonexistent', log });

describe('redis-stream options', () => {
  it('defaults to the documented ones (docs/reference.md#queues-and-databases): a local Redis, callhook:calls, about a million entries, markers for 7 days', () => {
    expect(redisStreamSink.options.parse({})).toEqual({
      url: 'redis://127.0.0.1:6379',
      stream: 'callhook:calls',
      maxlen: 1_000_000,
      dedup_ttl: 604_800_000,
    });
    expect(redisStreamSink.options.parse({ maxlen: 0, dedup_ttl: '1d12h' })).toMatchObject({
      maxlen: 0,
      dedup_ttl: 129_600_000,
    });
  });

  it('refuses a bad option at start-up, naming the sink and the option', async () => {
    const refusal = (options: Record<string, unknown>) =>
      resolveSinks([{ name: 'events', type: 'redis-stream', ...options }]).then(
        () => 'accepted',
        (err: Error) => err.message,
      );
    expect(await refusal({ url: 'http://127.0.0.1:6379' })).toBe(
      'sinks[0] (events).url: url must be a redis:// or rediss:// URL',
    );
    expect(await refusal({ stream: '' })).toBe('sinks[0] (events).stream: stream must name a key');
    expect(await refusal({ maxlen: -1 })).toBe('sinks[0] (events).maxlen: maxlen must be 0 (keep all) or more');
    expect(await refusal({ maxlen: 10.5 })).toBe('sinks[0] (events).maxlen: maxlen must be a whole number of entries');
    expect(await refusal({ dedup_ttl: '0s' })).toBe('sinks[0] (events).dedup_ttl: dedup_ttl must be longer than 0');
    expect(await refusal({ dedup_ttl: 'a week' })).toMatch(
      /^sinks\[0\] \(events\)\.dedup_ttl: "a week" is not a duration/,
    );
    expect(await refusal({ maxlength: 5 })).toBe('sinks[0] (events).maxlength: unknown option');
  });

  it('warns at start-up of a dedup_ttl that the default retry schedule outlasts, and not of one it does not', async () => {
    const warned = async (ttl: string) => {
      const lines: string[] = [];
      const capture = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
      await redisStreamSink.open(redisStreamSink.options.parse({ dedup_ttl: ttl }), {
        name: 'stream',
        dataDir: '/nonexistent',
        log: capture,
      });
      return lines.join('');
    };
    expect(await warned('1h')).toContain('dedup_ttl is shorter than the default retry schedule');
    expect(await warned('15h')).toBe('');
  });
});

const url = serviceUrl('redis');

describe.skipIf(!url)('redis-stream sink on the real Redis', () => {
  let redis: Redis;
  const prefix = `callhook-test:${randomBytes(6).toString('hex')}`;
  let n = 0;
  /** A stream of this test's own: test files run at once against one server. */
  const streamName = () => `${prefix}:${++n}`;
  const entries = async (stream: string) =>
    (await redis.xrange(stream, '-', '+')).map(([entryId, flat]) => ({
      entryId,
      fields: Object.fromEntries(pairs(flat)),
    }));

  beforeAll(() => {
    redis = new Redis(url!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('adds one entry per call with id, hook, revision, idempotency_key and the record as JSON, and a marker naming it', async () => {
    const stream = streamName();
    const sink = await open({ url, stream });
    const rec = record('c1');
    await sink.deliver(rec, context(rec));
    await sink.close?.();
    const [entry, ...more] = await entries(stream);
    expect(more).toEqual([]);
    expect(entry!.fields).toEqual({
      id: 'c1',
      hook: 'end-of-call',
      revision: '1',
      idempotency_key: 'c1:stream',
      record: JSON.stringify(rec),
    });
    expect(JSON.parse(entry!.fields.record!)).toEqual(rec);
    expect(await redis.get(`${stream}:sent:c1:stream`)).toBe(entry!.entryId);
    const ttl = await redis.pttl(`${stream}:sent:c1:stream`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(604_800_000);
  });

  it('adds nothing for a repeat, also for repeats racing each other and from another connection, and an edit adds its own entry', async () => {
    const stream = streamName();
    const first = await open({ url, stream });
    const rec = record('c2');
    await Promise.all(Array.from({ length: 5 }, () => first.deliver(rec, context(rec))));
    await first.close?.();
    const second = await open({ url, stream }); // as after a restart
    await second.deliver(rec, { ...context(rec), attempt: 2 });
    const edited = record('c2', 2);
    await second.deliver(edited, context(edited));
    await second.deliver(edited, context(edited));
    await second.close?.();
    expect((await entries(stream)).map((e) => [e.fields.idempotency_key, e.fields.revision])).toEqual([
      ['c2:stream', '1'],
      ['c2:stream:r2', '2'],
    ]);
  });

  it('trims approximately to maxlen, and keeps every entry with maxlen 0', async () => {
    const [capped, unbounded] = [streamName(), streamName()];
    const sinks = [await open({ url, stream: capped, maxlen: 10 }), await open({ url, stream: unbounded, maxlen: 0 })];
    for (let i = 0; i < 250; i++) {
      const rec = record(`t${i}`);
      await Promise.all(sinks.map((sink) => sink.deliver(rec, context(rec))));
    }
    await Promise.all(sinks.map((sink) => sink.close?.()));
    // `~` trims whole nodes of the stream (100 entries each by default), so about 10 means fewer than 250 here.
    expect(await redis.xlen(capped)).toBeLessThan(250);
    expect(await redis.xlen(unbounded)).toBe(250);
  });

  it('writes neither entry nor marker when the stream key holds another type, and delivers once the key is cleared', async () => {
    const stream = streamName();
    await redis.set(stream, 'not a stream');
    const sink = await open({ url, stream });
    const rec = record('c3');
    const err = await sink.deliver(rec, context(rec)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toMatch(
      /^Redis at [^ ]+: the stream's key or a marker holds another type of value .*WRONGTYPE/,
    );
    expect(await redis.exists(`${stream}:sent:c3:stream`)).toBe(0);
    await redis.del(stream);
    await sink.deliver(rec, context(rec)); // an operator's retry of the dead delivery
    await sink.close?.();
    expect((await entries(stream)).map((e) => e.fields.id)).toEqual(['c3']);
  });

  it("starts with Redis down, fails each attempt at once as retryable without the url's password, and delivers once it is back", async () => {
    const proxy = await startTcpProxy(url!, 6379);
    const stream = streamName();
    await proxy.down();
    const withPassword = new URL(proxy.url(url!));
    withPassword.username = 'default';
    withPassword.password = 'hunter2-secret';
    const sink = await open({ url: withPassword.toString(), stream }); // create() opens nothing
    const rec = record('c4');
    const down = await sink.deliver(rec, context(rec)).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(RetryableError);
    expect((down as Error).message).toMatch(/^Redis at 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    expect((down as Error).message).not.toContain('hunter2');

    await proxy.up();
    // Redis on this machine has no password: ioredis warns and goes on (the AUTH is then only tested against a fake
    // below).
    const plain = await open({ url: proxy.url(url!), stream });
    await plain.deliver(rec, context(rec));
    await proxy.down(); // cuts the open connection: the next attempt fails, and the one after opens another
    const rec2 = record('c5');
    expect(classify(await plain.deliver(rec2, context(rec2)).catch((e: unknown) => e)).kind).toBe('retry');
    await proxy.up();
    await plain.deliver(rec2, context(rec2));
    await Promise.all([sink.close?.(), plain.close?.(), proxy.close()]);
    expect((await entries(stream)).map((e) => e.fields.id)).toEqual(['c4', 'c5']);
  });

  it('keeps the shared connection when one attempt is given up on a slow reply: the deliveries in flight beside it succeed', async () => {
    const proxy = await replyDelayingProxy(url!);
    const stream = streamName();
    const sink = await open({ url: proxy.url, stream });
    const [r0, r1, r2] = [record('s0'), record('s1'), record('s2')];
    await sink.deliver(r0, context(r0)); // the one connection is open
    proxy.hold();
    const attempt = new AbortController();
    const givenUp = sink.deliver(r1, context(r1, attempt.signal)).catch((e: unknown) => e);
    const beside = sink.deliver(r2, context(r2));
    await new Promise((resolve) => setImmediate(resolve)); // both sent, their replies held
    attempt.abort(new Error('the attempt timed out'));
    await new Promise((resolve) => setImmediate(resolve));
    proxy.release();
    await beside;
    expect(await givenUp).toBeUndefined(); // its reply came after all
    expect(proxy.opened).toBe(1);
    await Promise.all([sink.close?.(), proxy.close()]);
    expect((await entries(stream)).map((e) => e.fields.id)).toEqual(['s0', 's1', 's2']);
  });

  it('drops a connection that answers nothing once an attempt on it was given up, and the next attempt opens another', async () => {
    const proxy = await replyDelayingProxy(url!);
    const stream = streamName();
    const sink = await open({ url: proxy.url, stream });
    const [r0, r1] = [record('u0'), record('u1')];
    await sink.deliver(r0, context(r0));
    proxy.hold(); // the server of this connection never answers again
    const attempt = new AbortController();
    const givenUp = sink.deliver(r1, context(r1, attempt.signal)).catch((e: unknown) => e);
    await new Promise((resolve) => setImmediate(resolve));
    attempt.abort(new Error('the attempt timed out'));
    // Not at once: only when it has not answered a PING in its time either.
    await until(() => proxy.closed === 1, { timeoutMs: 15_000, everyMs: 100 });
    expect(await givenUp).toBeInstanceOf(RetryableError);
    await sink.deliver(r1, context(r1)); // the retry, on a connection of its own
    expect(proxy.opened).toBe(2);
    await Promise.all([sink.close?.(), proxy.close()]);
    expect((await entries(stream)).map((e) => e.fields.id)).toEqual(['u0', 'u1']);
  });

  it('gives a refused password up at once: WRONGPASS and NOAUTH are permanent', async () => {
    for (const answer of [
      'WRONGPASS invalid username-password pair or user is disabled.',
      'NOAUTH Authentication required.',
    ]) {
      const fake = await fakeRedis(answer);
      const port = (fake.address() as { port: number }).port;
      const sink = await open({ url: `redis://default:hunter2-secret@127.0.0.1:${port}`, stream: streamName() });
      const err = await sink.deliver(record('c6'), context(record('c6'))).catch((e: unknown) => e);
      await sink.close?.();
      await new Promise((resolve) => fake.close(resolve));
      expect(err, answer).toBeInstanceOf(PermanentError);
      expect((err as Error).message, answer).toContain(answer.split(' ')[0]);
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  it('refuses nothing at create() for a Redis that is not there', async () => {
    const sink = await open({ url: `redis://127.0.0.1:${await closedPort()}`, stream: streamName() });
    await sink.close?.();
  });
});

function pairs(flat: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

/**
 * A server that answers every command of the RESP protocol with one error, as a Redis that refuses the client would.
 */
async function fakeRedis(error: string): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('data', (chunk) => {
      // One reply per command: each command of a pipelined batch starts with `*<count>` on a line of its own.
      const commands = chunk.toString('latin1').match(/(^|\r\n)\*\d+\r\n/g)?.length ?? 1;
      socket.write(`-${error}\r\n`.repeat(commands));
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * A proxy to Redis that can keep back the replies of the connections open now, and later let them through in
 * order: a server that is slow to answer, not one that lost the replies (test/helpers/tcp-proxy.ts drops them).
 * Connections opened after `hold()` are not held.
 */
async function replyDelayingProxy(serviceUrl: string) {
  const target = new URL(serviceUrl);
  const held = new Map<Socket, Buffer[]>();
  const sockets = new Set<Socket>();
  const live = new Set<Socket>();
  let opened = 0;
  let closed = 0;
  const server = createServer((client) => {
    opened++;
    live.add(client);
    client.on('close', () => {
      if (live.delete(client)) closed++;
    });
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => (client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const buffer = held.get(client);
      if (buffer) buffer.push(chunk);
      else client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(serviceUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as { port: number }).port);
  return {
    url: proxied.toString(),
    get opened() {
      return opened;
    },
    /** Connections the client closed (or lost). */
    get closed() {
      return closed;
    },
    hold: () => {
      for (const client of live) held.set(client, []);
    },
    release: () => {
      for (const [client, buffer] of held) for (const chunk of buffer) client.write(chunk);
      held.clear();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
