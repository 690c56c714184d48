import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { Sink } from '../sink.js';
import { redisStreamSink } from './redis-stream.js';

/**
 * A person's erasure in the `redis-stream` sink (docs/reference.md#erasure), against the real Redis: the entries of
 * their records deleted, and the markers beside them, also a marker whose entry `maxlen` trimmed away.
 */

const log = pino({ level: 'silent' });
const url = serviceUrl('redis');
const id = (n: number) => `019a0000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const record = (n: number, revision = 1): CallRecord => ({
  id: id(n),
  hook: 'end-of-call',
  dedup_key: `call_id:c${n}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision,
  data: { first_name: 'Asha', phone_number: '+919812345678' },
  extra: {},
  problems: [],
});
const context = (r: CallRecord, sink = 'stream') => ({
  attempt: 1,
  idempotencyKey: r.revision > 1 ? `${r.id}:${sink}:r${r.revision}` : `${r.id}:${sink}`,
  signal: new AbortController().signal,
  log,
});
const eraseContext = (signal = new AbortController().signal) => ({ signal, log });
const open = (options: Record<string, unknown>, name = 'stream') =>
  redisStreamSink.open(redisStreamSink.options.parse(options), { name, dataDir: '/nonexistent', log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('redis-stream erase with Redis down', () => {
  it("fails as a delivery does: retryable, without the url's password", async () => {
    const port = await closedPort();
    const sink = await open({ url: `redis://default:hunter2-secret@127.0.0.1:${port}` });
    const err = await failure(sink.erase!([id(1)], eraseContext()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.message).toMatch(/^Redis at 127\.0\.0\.1:\d+: .*ECONNREFUSED/);
    expect(err.message).not.toContain('hunter2');
    await sink.close?.();
  });
});

describe.skipIf(!url)('redis-stream erase on the real Redis', () => {
  let redis: Redis;
  const prefix = `callhook-test:${randomBytes(6).toString('hex')}`;
  let n = 0;
  const sinks: Sink[] = [];
  /** A stream of this test's own: test files run at once against one server. */
  const streamName = () => `${prefix}:${++n}`;
  const openSink = async (options: Record<string, unknown>, name?: string) => {
    const sink = await open({ url, ...options }, name);
    sinks.push(sink);
    return sink;
  };
  const deliverAll = async (sink: Sink, records: CallRecord[], name?: string) => {
    for (const r of records) await sink.deliver(r, context(r, name));
  };
  const idsIn = async (stream: string) =>
    (await redis.xrange(stream, '-', '+')).map(([, flat]) => flat.find((_, i) => i % 2 === 1 && flat[i - 1] === 'id'));
  const markers = async (stream: string) => (await redis.keys(`${stream}:sent:*`)).sort();

  beforeAll(() => {
    redis = new Redis(url!);
  });
  afterAll(async () => {
    for (const sink of sinks) await sink.close?.();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('deletes the entries of the erased records (each revision) and their markers, leaves the rest, and counts entries', async () => {
    const stream = streamName();
    const sink = await openSink({ stream });
    await deliverAll(sink, [record(1), record(2), record(3), record(2, 2), record(4)]);
    // An entry someone else added, with no id field, is left alone.
    await redis.xadd(stream, '*', 'note', `about ${id(2)}`);

    expect(await sink.erase!([id(2), id(3), id(99)], eraseContext())).toBe(3);

    expect(await idsIn(stream)).toEqual([id(1), id(4), undefined]);
    expect(await markers(stream)).toEqual([`${stream}:sent:${id(1)}:stream`, `${stream}:sent:${id(4)}:stream`]);
    expect(await sink.erase!([id(2)], eraseContext())).toBe(0);
    expect(await sink.erase!([], eraseContext())).toBe(0);
    // Deliveries go on.
    await deliverAll(sink, [record(5)]);
    expect(await idsIn(stream)).toEqual([id(1), id(4), undefined, id(5)]);
  });

  it('reads a long stream page by page, and finds markers whose entries maxlen trimmed away', async () => {
    const stream = streamName();
    const sink = await openSink({ stream, maxlen: 0 });
    const many = Array.from({ length: 1_300 }, (_, i) => record(i + 1));
    await Promise.all(many.map((r) => sink.deliver(r, context(r))));
    // Trimmed by hand as MAXLEN would: the first 100 entries go, their markers stay until dedup_ttl.
    await redis.xtrim(stream, 'MAXLEN', 1_200);
    const erased = [50, 700, 1_250, 1_300].map(id);

    expect(await sink.erase!(erased, eraseContext())).toBe(3);

    const left = await idsIn(stream);
    expect(left).toHaveLength(1_197);
    expect(left.filter((rid) => erased.includes(rid!))).toEqual([]);
    const names = await markers(stream);
    expect(names).toHaveLength(1_296);
    expect(names.filter((name) => erased.some((rid) => name.includes(rid)))).toEqual([]);
  });

  it('deletes the entries and markers another sink wrote to the same stream, and none of another stream', async () => {
    const [shared, other] = [streamName(), streamName()];
    const first = await openSink({ stream: shared }, 'first');
    const second = await openSink({ stream: shared }, 'second');
    const elsewhere = await openSink({ stream: other });
    await deliverAll(first, [record(1), record(2)], 'first');
    await deliverAll(second, [record(1)], 'second');
    await deliverAll(elsewhere, [record(1)]);

    expect(await first.erase!([id(1)], eraseContext())).toBe(2);

    expect(await idsIn(shared)).toEqual([id(2)]);
    expect(await markers(shared)).toEqual([`${shared}:sent:${id(2)}:first`]);
    expect(await idsIn(other)).toEqual([id(1)]);
    expect(await markers(other)).toEqual([`${other}:sent:${id(1)}:stream`]);
  });

  it('takes a stream name with glob characters as itself', async () => {
    // `?` matches any one character in a pattern: unescaped, it would take the lookalike's markers for this stream's.
    const stream = `${streamName()}:?`;
    const lookalike = `${stream.slice(0, -1)}b`;
    const sink = await openSink({ stream });
    const near = await openSink({ stream: lookalike });
    await deliverAll(sink, [record(1)]);
    await deliverAll(near, [record(1)]);
    expect(await sink.erase!([id(1)], eraseContext())).toBe(1);
    expect(await markers(lookalike)).toEqual([`${lookalike}:sent:${id(1)}:stream`]);
    expect(await redis.exists(`${stream}:sent:${id(1)}:stream`)).toBe(0);
  });

  it('stops when it is given up, with the reason, and says a stream key of another type is permanent', async () => {
    const stream = streamName();
    const sink = await openSink({ stream });
    await deliverAll(sink, [record(1)]);
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    expect((await failure(sink.erase!([id(1)], eraseContext(controller.signal)))).message).toBe('shutting down');
    expect(await idsIn(stream)).toEqual([id(1)]);

    const wrong = streamName();
    await redis.set(wrong, 'not a stream');
    const other = await openSink({ stream: wrong });
    const err = await failure(other.erase!([id(1)], eraseContext()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toMatch(/WRONGTYPE/);
  });
});
