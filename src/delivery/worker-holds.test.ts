import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { until } from '../../test/helpers/server.js';
import { commit, sinksOf } from '../../test/helpers/worker-calls.js';
import { RetryableError } from '../sinks/errors.js';
import type { Sink } from '../sinks/sink.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { type AttemptEvent, createDeliveryWorker } from './worker.js';

/**
 * What holds a sink's deliveries back (docs/reference.md#what-every-sink-shares): its `rate`, a 429's wait, and a
 * pause.
 */

const log = pino({ level: 'silent' });
const ids = (n: number) => Array.from({ length: n }, (_, i) => `r${String(i).padStart(2, '0')}`);

describe('delivery worker holds', () => {
  it('starts at most `rate.max` deliveries in any window of `rate.per`, however many slots are free', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const starts: number[] = [];
    const sink: Sink = { deliver: async () => void starts.push(Date.now()) };
    for (const id of ids(10)) await commit(store, id, ['s']);
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['s', sink]], { concurrency: 8, rate: { max: 3, perMs: 400 } }),
      log,
      idleMs: 5,
    });
    worker.start();
    await until(async () => (await store.countDeliveries()).done === 10);
    await worker.stop();
    expect(starts).toHaveLength(10);
    // Every window that opens at a start holds at most three starts.
    const most = Math.max(...starts.map((from) => starts.filter((t) => t >= from && t < from + 400).length));
    expect(most).toBe(3);
  });

  it('pauses the whole sink for a 429 until the wait it was given: the others spend no attempt meanwhile (docs/reference.md#what-every-sink-shares)', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const started: { id: string; at: number }[] = [];
    const events: AttemptEvent[] = [];
    let pausedFrom = 0;
    const sink: Sink = {
      deliver: async (r) => {
        started.push({ id: r.id, at: Date.now() });
        if (started.length === 1) {
          pausedFrom = Date.now();
          throw new RetryableError('HTTP 429: slow down', { status: 429, retryAfterMs: 600 });
        }
      },
    };
    for (const id of ids(5)) await commit(store, id, ['s']);
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['s', sink]], { concurrency: 1 }),
      log,
      idleMs: 5,
      onAttempt: (e) => events.push(e),
    });
    worker.start();
    await until(async () => (await store.countDeliveries()).done === 5, { timeoutMs: 15_000 });
    await worker.stop();
    // The default schedule's first step is 30 s: the delivery that met the 429 came back after the 600 ms it was
    // given, and no other started before then.
    expect(started[0]!.id).toBe('r00');
    expect(
      started
        .slice(1)
        .map((s) => s.id)
        .sort(),
    ).toEqual(ids(5));
    expect(started.slice(1).every((s) => s.at >= pausedFrom + 600)).toBe(true);
    const attempts = await Promise.all(ids(5).map((id) => store.listAttempts(id)));
    expect(attempts.map((list) => list.map((a) => [a.attempt, a.outcome, a.httpStatus]))).toEqual([
      [
        [1, 'retry', 429],
        [2, 'ok', null],
      ],
      [[1, 'ok', null]],
      [[1, 'ok', null]],
      [[1, 'ok', null]],
      [[1, 'ok', null]],
    ]);
    expect(events.filter((e) => e.rateLimited)).toHaveLength(1);
    expect((await store.sinkStates())[0]).toMatchObject({ sink: 's', lastError: 'HTTP 429: slow down' });
  });

  it('releases uncounted a claim that was on its way when a 429 came: no attempt starts during the wait (docs/reference.md#what-every-sink-shares)', async () => {
    const inner = openSqliteStore({ path: ':memory:' });
    const onItsWay: string[] = [];
    let answer429 = () => {};
    const answered = new Promise<void>((resolve) => (answer429 = resolve));
    // The first claim after the first one is held on its way until the 429 is recorded: a claim the loop made while
    // the 429's attempt was in flight, its leases taken, that comes back after the sink was told to wait.
    let claims = 0;
    const store: Store = {
      ...inner,
      async claimDeliveries(...args) {
        const claimed = await inner.claimDeliveries(...args);
        if (++claims === 2) {
          onItsWay.push(...claimed.map((d) => d.record.id));
          answer429();
          await until(async () => (await inner.listAttempts('r00')).length === 1);
        }
        return claimed;
      },
    };
    const events: AttemptEvent[] = [];
    const sink: Sink = {
      deliver: async (r) => {
        if (r.id !== 'r00' || events.length > 0) return;
        await answered;
        throw new RetryableError('HTTP 429: slow down', { status: 429, retryAfterMs: 600 });
      },
    };
    for (const id of ids(20)) await commit(store, id, ['s']);
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['s', sink]], { concurrency: 4 }),
      log,
      idleMs: 5,
      onAttempt: (e) => events.push(e),
    });
    worker.start();
    await until(async () => (await store.countDeliveries()).done === 20, { timeoutMs: 15_000 });
    await worker.stop();

    expect(onItsWay.length).toBeGreaterThan(0);
    expect(onItsWay).not.toContain('r00');
    const attempts = (await Promise.all(ids(20).map((id) => store.listAttempts(id)))).flat();
    // Exactly one attempt met the 429 and counts; every other delivery, those of the claim on its way too, spent
    // one attempt, its successful one.
    expect(attempts.filter((a) => a.httpStatus === 429).map((a) => [a.attempt, a.outcome])).toEqual([[1, 'retry']]);
    const perDelivery = new Map<number, string[]>();
    for (const a of attempts) perDelivery.set(a.deliveryId, [...(perDelivery.get(a.deliveryId) ?? []), a.outcome]);
    expect([...perDelivery.values()].sort((a, b) => a.length - b.length)).toEqual([
      ...Array(19).fill(['ok']),
      ['retry', 'ok'],
    ]);
    expect(events.filter((e) => e.rateLimited)).toHaveLength(1);
    // No attempt started during the wait: from when the 429 came to the wait the store recorded for the sink, every
    // attempt started either before (the others in flight with it) or after.
    const limited = attempts.find((a) => a.httpStatus === 429)!;
    const came = Date.parse(limited.startedAt) + limited.durationMs;
    const waitEnds = (await store.sinkStates()).find((s) => s.sink === 's')!.pausedUntil!;
    expect(waitEnds).toBeGreaterThan(came);
    const starts = attempts.filter((a) => a !== limited).map((a) => Date.parse(a.startedAt));
    expect(starts.filter((t) => t >= came && t < waitEnds)).toEqual([]);
    expect(starts.filter((t) => t < came).length).toBeLessThanOrEqual(3);
  });

  it('attempts nothing of a sink paused by the config until an operator resumes it, and nothing after an operator pauses it', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const delivered: string[] = [];
    const sink: Sink = { deliver: async (r) => void delivered.push(r.id) };
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf(
        [
          ['held', sink],
          ['free', sink],
        ],
        { paused: true },
      ),
      log,
      idleMs: 5,
    });
    await store.setSinkPaused('free', false);
    for (const id of ids(3)) await commit(store, id, ['held', 'free']);
    worker.start();
    await until(async () => (await store.countDeliveries()).done === 3);
    // Many looks at the outbox later, the paused sink's deliveries are still pending, none attempted.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await store.listDeliveries({ sink: 'held' })).map((d) => [d.state, d.attempts])).toEqual(
      Array(3).fill(['pending', 0]),
    );

    await store.setSinkPaused('held', false);
    worker.notify();
    await until(async () => (await store.countDeliveries()).done === 6);
    await store.setSinkPaused('held', true);
    for (const id of ['p1', 'p2']) await commit(store, id, ['held']);
    worker.notify();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await worker.stop();
    expect(delivered).toHaveLength(6);
    expect((await store.listDeliveries({ sink: 'held', state: 'pending' })).map((d) => d.attempts)).toEqual([0, 0]);
  });
});
