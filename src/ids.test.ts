import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from './ids.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The 48-bit millisecond at the front of a UUIDv7 (RFC 9562 section 5.7). */
const msOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
/** The first id that does not sort after the one made before it; -1 when each does. */
const outOfOrder = (ids: string[]) => ids.findIndex((id, i) => i > 0 && !(ids[i - 1]! < id));

// Times ahead of the clock, each later than the last test's: module state (the last id) carries from test to test.
describe('newId', () => {
  it('gives ids that sort in the order they were made within one tight loop, most inside one millisecond', () => {
    const ids = Array.from({ length: 10_000 }, () => newId());
    for (const id of ids.slice(0, 10)) expect(id).toMatch(UUID_V7);
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives UUIDv7s that sort by time and never repeat', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => newId(3_000_000_000_000 + i));
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.map(msOf)).toEqual(ids.map((_, i) => 3_000_000_000_000 + i));
  });

  it('gives ids in the order they were made when each is given the same time, which they keep', () => {
    const at = 3_100_000_000_000;
    const ids = Array.from({ length: 10_000 }, () => newId(at));
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map(msOf))).toEqual(new Set([at]));
  });

  it('keeps the order when the time given goes back (an earlier receive time made later)', () => {
    const later = newId(3_200_000_000_005);
    const earlier = newId(3_200_000_000_000);
    expect(earlier > later).toBe(true);
    expect(msOf(earlier)).toBe(3_200_000_000_005);
    expect(newId(3_200_000_000_006) > earlier).toBe(true);
  });
});

/** Where the 16-bit counter sits in a UUIDv7 made by newId: the top half of uuid's 32-bit seq (bits 12..27 of rand). */
const counterOf = (id: string) => {
  const hex = id.replaceAll('-', '');
  return (parseInt(hex.slice(13, 16), 16) << 4) | ((parseInt(hex.slice(16, 18), 16) & 0x3f) >> 2);
};

describe('newId, past the counter', () => {
  it('moves the time on a millisecond when the counter runs out, and keeps the order', () => {
    const at = 3_300_000_000_000;
    const ids = Array.from({ length: 70_000 }, () => newId(at));
    expect(outOfOrder(ids)).toBe(-1);
    expect(msOf(ids.at(-1)!)).toBeGreaterThan(at);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

/**
 * Webhook calls get their ids on the SQLite writer thread, reconciled and ingested ones on the main thread: the
 * order must hold across threads of the process. A real worker thread, loading ids.ts from the sources as the
 * store's threads do (store/thread.ts), makes ids on request.
 */
describe('newId across threads', () => {
  let worker: Worker;
  const ask = (n: number, at: number) =>
    new Promise<string[]>((resolve) => {
      worker.once('message', resolve);
      worker.postMessage({ n, at });
    });

  beforeAll(async () => {
    const tsx = import.meta.resolve('tsx/esm/api');
    const ids = new URL('./ids.ts', import.meta.url).href;
    const boot = `
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(ids)}); }).then(({ newId }) => {
        parentPort.on('message', ({ n, at }) => parentPort.postMessage(Array.from({ length: n }, () => newId(at))));
        parentPort.postMessage('ready');
      });`;
    worker = new Worker(boot, { eval: true });
    await new Promise((resolve, reject) => (worker.once('message', resolve), worker.once('error', reject)));
  });
  afterAll(() => worker.terminate());

  it('gives ids made alternately on the main thread and a worker thread, in one millisecond, in the order they were made', async () => {
    const at = 3_400_000_000_000;
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) {
      ids.push(newId(at));
      ids.push(...(await ask(1, at)));
    }
    expect(outOfOrder(ids)).toBe(-1);
    expect(new Set(ids.map(msOf))).toEqual(new Set([at]));
  });

  it('gives ids made at once on both threads one sequence: each thread in order, together every counter once', async () => {
    const at = 3_500_000_000_000;
    const theirs = ask(15_000, at);
    const ours = Array.from({ length: 15_000 }, () => newId(at));
    const all = [...ours, ...(await theirs)];
    expect(outOfOrder(ours)).toBe(-1);
    expect(outOfOrder(all.slice(ours.length))).toBe(-1);
    // One shared counter hands out each value once and skips none; two would each start at random. 30,000 ids
    // from a start below 32,768 stay in the millisecond.
    const counters = all.map(counterOf).sort((a, b) => a - b);
    expect(new Set(all.map(msOf))).toEqual(new Set([at]));
    expect(counters.at(-1)! - counters[0]!).toBe(all.length - 1);
    expect(new Set(counters).size).toBe(all.length);
  });
});
