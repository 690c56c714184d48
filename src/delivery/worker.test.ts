import { open as openFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { tempDir, until } from '../../test/helpers/server.js';
import { commit, sinksOf } from '../../test/helpers/worker-calls.js';
import { PermanentError, RetryableError } from '../sinks/errors.js';
import { jsonlSink } from '../sinks/jsonl/jsonl.js';
import type { Sink } from '../sinks/sink.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import { createDeliveryWorker, idempotencyKey } from './worker.js';

const log = pino({ level: 'silent' });
const fast = { schedule: [10, 10], jitter: 0 };

describe('delivery worker', () => {
  it('delivers each record once to each sink, with the idempotency key and attempt number', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const seen: string[] = [];
    const sink: Sink = { deliver: async (r, c) => void seen.push(`${r.id}|${c.idempotencyKey}|${c.attempt}`) };
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([
        ['a', sink],
        ['b', sink],
      ]),
      log,
    });
    worker.start();
    await commit(store, 'r1', ['a', 'b']);
    worker.notify();
    await until(() => seen.length === 2);
    await worker.stop();
    expect(seen.sort()).toEqual(['r1|r1:a|1', 'r1|r1:b|1']);
    expect(await store.countDeliveries()).toMatchObject({ done: 2, pending: 0 });
  });

  it('retries a retryable failure on the schedule and records every attempt', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    let calls = 0;
    const sink: Sink = {
      deliver: async () => {
        if (++calls < 3) throw new RetryableError('HTTP 500', { status: 500 });
      },
    };
    const worker = createDeliveryWorker({ store, sinks: sinksOf([['s', sink]], { retry: fast }), log, idleMs: 5 });
    worker.start();
    await commit(store, 'r1', ['s']);
    await until(async () => (await store.countDeliveries()).done === 1);
    await worker.stop();
    expect(calls).toBe(3);
  });

  it('ends a permanent failure at once and a retryable one after the last attempt, as dead', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const attempts = { perm: 0, flaky: 0 };
    const sinks = sinksOf(
      [
        [
          'perm',
          {
            deliver: async () => {
              attempts.perm++;
              throw new PermanentError('HTTP 400', { status: 400 });
            },
          },
        ],
        [
          'flaky',
          {
            deliver: async () => {
              attempts.flaky++;
              throw new Error('ECONNREFUSED');
            },
          },
        ],
      ],
      { retry: fast },
    );
    const worker = createDeliveryWorker({ store, sinks, log, idleMs: 5 });
    worker.start();
    await commit(store, 'r1', ['perm', 'flaky']);
    await until(async () => (await store.countDeliveries()).dead === 2);
    await worker.stop();
    expect(attempts).toEqual({ perm: 1, flaky: 3 });
  });

  it("reads a plain error's status as the http sink does: a 4xx but 408, 425 and 429 is permanent unless it says not", async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const attempts: Record<string, number> = {};
    const failing = (name: string, fields: Record<string, unknown>): [string, Sink] => [
      name,
      {
        deliver: async () => {
          attempts[name] = (attempts[name] ?? 0) + 1;
          throw Object.assign(new Error(`failed: ${name}`), fields);
        },
      },
    ];
    const sinks = sinksOf(
      [
        failing('s404', { status: 404 }),
        failing('s429', { status: 429 }),
        failing('s503', { status: 503 }),
        failing('s404-retry', { status: 404, permanent: false }),
      ],
      { retry: fast },
    );
    const worker = createDeliveryWorker({ store, sinks, log, idleMs: 5 });
    worker.start();
    await commit(store, 'r1', ['s404', 's429', 's503', 's404-retry']);
    await until(async () => (await store.countDeliveries()).dead === 4);
    await worker.stop();
    expect(attempts).toEqual({ s404: 1, s429: 3, s503: 3, 's404-retry': 3 });
    expect(
      (await store.listAttempts('r1'))
        .filter((a) => a.attempt === 1)
        .map((a) => a.httpStatus)
        .sort(),
    ).toEqual([404, 404, 429, 503]);
  });

  it('times out a hanging sink without holding back another', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const delivered: string[] = [];
    const sinks = sinksOf(
      [
        ['hang', { deliver: () => new Promise(() => {}) }],
        ['ok', { deliver: async (r) => void delivered.push(r.id) }],
      ],
      { timeoutMs: 50, retry: { schedule: [60_000], jitter: 0 } },
    );
    const worker = createDeliveryWorker({ store, sinks, log, leaseMs: 1000 });
    worker.start();
    for (const id of ['r1', 'r2', 'r3']) await commit(store, id, ['hang', 'ok']);
    worker.notify();
    await until(() => delivered.length === 3);
    await until(async () => (await store.countDeliveries()).pending === 3);
    await worker.stop();
  });

  it('on stop returns attempts still in flight to pending without counting them', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['slow', { deliver: () => new Promise(() => {}) }]]),
      log,
    });
    worker.start();
    await commit(store, 'r1', ['slow']);
    worker.notify();
    await until(async () => (await store.countDeliveries()).in_flight === 1);
    await worker.stop(20);
    expect(await store.countDeliveries()).toMatchObject({ pending: 1, in_flight: 0 });
    const [again] = await store.claimDeliveries('slow', 1, 1000);
    expect(again!.attempt).toBe(1);
  });

  it('times out every delivery of one claim at its deadline, with no listener warning however many there are', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const listening: AbortSignal[] = [];
    const hang: Sink = {
      deliver: (_r, { signal }) =>
        new Promise(
          (_, reject) => (listening.push(signal), signal.addEventListener('abort', () => reject(signal.reason))),
        ),
    };
    const sinks = sinksOf([['hang', hang]], {
      timeoutMs: 50,
      concurrency: 40,
      retry: { schedule: [60_000], jitter: 0 },
    });
    const worker = createDeliveryWorker({ store, sinks, log, leaseMs: 1000 });
    for (let i = 0; i < 40; i++) await commit(store, `r${i}`, ['hang']);
    worker.start();
    await until(async () => (await store.countDeliveries()).pending === 40 && listening.length === 40);
    await worker.stop();
    process.off('warning', onWarning);
    const attempts = await Promise.all(Array.from({ length: 40 }, (_, i) => store.listAttempts(`r${i}`)));
    expect(attempts.map((list) => list.map((a) => [a.outcome, a.error]))).toEqual(
      Array(40).fill([['retry', 'timed out after 50 ms']]),
    );
    expect(warnings).toEqual([]);
  });

  it("gives a sink a logger bound to the delivery's sink, call and attempt", async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const lines: Record<string, unknown>[] = [];
    const sinkLog = pino(
      { level: 'info', base: undefined },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['talky', { deliver: async (_r, c) => c.log.info('sent') }]]),
      log: sinkLog,
    });
    worker.start();
    await commit(store, 'r1', ['talky']);
    worker.notify();
    await until(() => lines.length === 1);
    await worker.stop();
    expect(lines[0]).toMatchObject({ sink: 'talky', callId: 'r1', attempt: 1, msg: 'sent' });
  });

  it('keeps delivering the other records while one attempt hangs', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const delivered: string[] = [];
    let hanging: string | undefined;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const sink: Sink = {
      deliver: async (r) => {
        if (hanging === undefined) {
          hanging = r.id;
          await held; // answers only when the test says so, long after the others
        }
        delivered.push(r.id);
      },
    };
    for (let i = 0; i < 10; i++) await commit(store, `r${i}`, ['s']);
    const worker = createDeliveryWorker({
      store,
      sinks: sinksOf([['s', sink]], { concurrency: 2, timeoutMs: 30_000 }),
      log,
    });
    worker.start();
    // The nine are recorded in the turns after their deliveries (the store records a turn's attempts together).
    await until(async () => delivered.length === 9 && (await store.countDeliveries()).done === 9);
    expect(delivered).not.toContain(hanging);
    expect(await store.countDeliveries()).toMatchObject({ done: 9, in_flight: 1, pending: 0 });
    release();
    await until(async () => (await store.countDeliveries()).done === 10);
    await worker.stop();
    expect(delivered).toHaveLength(10);
  });

  it('keeps `concurrency` attempts in flight while there is a backlog, never more, and refills the slots freed in one turn with one claim', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const claims = vi.spyOn(store, 'claimDeliveries');
    const held = new Map<string, () => void>();
    const delivered: string[] = [];
    let now = 0;
    let most = 0;
    const sink: Sink = {
      deliver: (r) =>
        new Promise<void>((resolve) => {
          most = Math.max(most, ++now);
          held.set(r.id, () => (held.delete(r.id), now--, delivered.push(r.id), resolve()));
        }),
    };
    const releaseOldest = (n: number) => {
      for (const release of [...held.values()].slice(0, n)) release();
    };
    for (let i = 0; i < 20; i++) await commit(store, `r${String(i).padStart(2, '0')}`, ['s']);
    const worker = createDeliveryWorker({ store, sinks: sinksOf([['s', sink]], { concurrency: 3 }), log });
    worker.start();
    await until(() => held.size === 3);
    releaseOldest(1);
    // Refilled while the other two still hang.
    await until(() => delivered.length === 1 && held.size === 3);
    releaseOldest(2);
    await until(() => delivered.length === 3 && held.size === 3);
    expect(claims.mock.calls.map(([, limit]) => limit)).toEqual([3, 1, 2]);
    while (delivered.length < 20) {
      await until(() => held.size === Math.min(3, 20 - delivered.length));
      releaseOldest(1);
    }
    await until(async () => (await store.countDeliveries()).done === 20);
    await worker.stop();
    expect(most).toBe(3);
    expect(new Set(delivered).size).toBe(20);
  });

  it('asks for the next due time after a claim that was not full, unless a commit woke it meanwhile', async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const asked: string[] = [];
    const claim = store.claimDeliveries.bind(store);
    const nextDueIn = store.nextDueIn.bind(store);
    // The second claim's call is committed and notified while the first claim is on its way.
    let duringClaim: (() => Promise<void>) | undefined;
    vi.spyOn(store, 'claimDeliveries').mockImplementation(async (...args) => {
      asked.push('claim');
      const claimed = await claim(...args);
      const meanwhile = duringClaim;
      duringClaim = undefined;
      await meanwhile?.();
      return claimed;
    });
    vi.spyOn(store, 'nextDueIn').mockImplementation(async (...args) => {
      asked.push('nextDueIn');
      return nextDueIn(...args);
    });
    const delivered: string[] = [];
    const sink: Sink = { deliver: async (r) => void delivered.push(r.id) };
    const worker = createDeliveryWorker({ store, sinks: sinksOf([['s', sink]], { concurrency: 4 }), log });
    await commit(store, 'r1', ['s']);
    duringClaim = async () => {
      await commit(store, 'r2', ['s']);
      worker.notify();
    };
    worker.start();
    await until(async () => (await store.countDeliveries()).done === 2);
    await until(() => asked.includes('nextDueIn'));
    await worker.stop();
    expect(delivered).toEqual(['r1', 'r2']);
    // Claim 1 (r1, woken meanwhile): straight to claim 2 (r2), and only then, with no wake-up, the next due time.
    expect(asked.slice(0, 3)).toEqual(['claim', 'claim', 'nextDueIn']);
  });

  it("still hands the jsonl sink each claim's deliveries in one turn, so they share one datasync", async () => {
    const store = openSqliteStore({ path: ':memory:' });
    const dir = tempDir();
    const sink = await jsonlSink.open(jsonlSink.options.parse({}), { name: 'jsonl', dataDir: dir, log });
    // FileHandle is not exported; its prototype is reached through a handle.
    const probe = await openFile(join(dir, 'probe'), 'w');
    const prototype = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    for (let i = 0; i < 128; i++) await commit(store, `r${String(i).padStart(3, '0')}`, ['jsonl']);
    const datasync = vi.spyOn(prototype, 'datasync');
    const worker = createDeliveryWorker({ store, sinks: sinksOf([['jsonl', sink]], { concurrency: 64 }), log });
    try {
      worker.start();
      await until(async () => (await store.countDeliveries()).done === 128);
      expect(datasync).toHaveBeenCalledTimes(2);
    } finally {
      await worker.stop();
      datasync.mockRestore();
      await sink.close?.();
    }
  });
});

describe('the idempotency key of a delivery', () => {
  it('is <record id>:<sink> as received, and names the revision of an edited record (docs/reference.md#sinks-and-delivery)', () => {
    expect(idempotencyKey({ id: 'r1', revision: 1 }, 'crm')).toBe('r1:crm');
    expect(idempotencyKey({ id: 'r1', revision: 3 }, 'crm')).toBe('r1:crm:r3');
  });
});
