import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDeliveryWorker, type WorkerSink } from '../src/delivery/worker.js';
import type { CallRecord } from '../src/record.js';
import { DEFAULT_POLICY } from '../src/sinks/policy.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { appOn } from './helpers/app.js';
import { post, sampleCall, until } from './helpers/server.js';

/**
 * A commit slower than it should be, as in a storm of thousands of calls, is answered 200 while it lands within the
 * configured `store_deadline` (docs/reference.md#replies); past it, 503, and the commit still under way goes on and
 * is delivered like any other. The deadline is made short here through the option, so a test does not wait 8 s.
 */

const log = pino({ level: 'silent' });
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * The app on a real listener, its commits each delayed by `commitMs` (`setCommitMs` changes it), and a worker
 * delivering to recording sinks.
 */
async function receiver({ commitMs, storeDeadlineMs }: { commitMs: number; storeDeadlineMs: number }) {
  let delay = commitMs;
  const inner = openSqliteStore({ path: ':memory:' });
  const store: Store = {
    ...inner,
    commitCall: async (input) => {
      await new Promise((resolve) => setTimeout(resolve, delay));
      return inner.commitCall(input);
    },
  };
  const delivered: { sink: string; record: CallRecord }[] = [];
  const recording = (sink: string): WorkerSink => ({
    sink: { deliver: async (record) => void delivered.push({ sink, record }) },
    policy: DEFAULT_POLICY,
  });
  // The default config's end-of-call hook delivers to its two sinks, `log` and `jsonl`.
  const worker = createDeliveryWorker({
    store,
    sinks: new Map([
      ['log', recording('log')],
      ['jsonl', recording('jsonl')],
    ]),
    log,
    idleMs: 20,
  });
  worker.start();
  const app = appOn(store, { log, http: { storeDeadlineMs } });
  const server = createAdaptorServer({ fetch: app.fetch });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    await new Promise((resolve) => server.close(resolve));
    await worker.stop();
    await inner.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const deliveredOf = (callId: string) =>
    delivered.filter(({ record }) => record.dedup_key === `call_id:${callId}`).map(({ sink }) => sink);
  return { url, deliveredOf, setCommitMs: (ms: number) => void (delay = ms) };
}

describe('the store deadline', () => {
  it('answers 200 for a commit slower than usual but inside the deadline, and delivers the call', async () => {
    const { url, deliveredOf } = await receiver({ commitMs: 600, storeDeadlineMs: 1_000 });
    const started = Date.now();
    const res = await post(url, sampleCall({ call_id: 'slow' }));
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    expect(await res.json()).toMatchObject({ status: 'accepted' });
    await until(() => deliveredOf('slow').length === 2);
    expect(deliveredOf('slow').sort()).toEqual(['jsonl', 'log']);
  });

  it('answers 503 at the deadline; the commit goes on, lands, and is delivered like any other', async () => {
    const { url, deliveredOf, setCommitMs } = await receiver({ commitMs: 1_500, storeDeadlineMs: 1_000 });
    const started = Date.now();
    const res = await post(url, sampleCall({ call_id: 'too-slow' }));
    // Answered at the deadline, not when the commit lands (that would be a 200).
    expect(res.status).toBe(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(await res.json()).toEqual({ error: 503, message: 'The store cannot commit the call right now' });

    await until(() => deliveredOf('too-slow').length === 2);
    expect(deliveredOf('too-slow').sort()).toEqual(['jsonl', 'log']);
    // Sent again (the sender does not, an operator may), it is the call already stored.
    setCommitMs(0);
    expect(await (await post(url, sampleCall({ call_id: 'too-slow' }))).json()).toMatchObject({ status: 'duplicate' });
  });
});
