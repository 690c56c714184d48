import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleCall } from '../../test/helpers/server.js';
import { loadConfig } from '../config.js';
import { CallhookError } from '../errors.js';
import { compileHooks, createIntake, type Hook } from '../intake/pipeline.js';
import type { PeriodCalls } from '../store/period-calls.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { createClock } from '../web/time.js';
import { createJobs, type Jobs } from './jobs.js';
import { type PeriodDeps, type RedeliveryJob, redeliverPeriod } from './period-redelivery.js';

/**
 * A period's redelivery to one sink (docs/reference.md#a-period-to-one-sink) on a real store: which calls go (the sink's route,
 * no held call, none twice), the period read as days in the zone, the job's figures, its retries and its stop.
 */

let store: Store;
/** The hooks as the calls were stored, before the sink `orders` was added to them. */
let before: Map<string, Hook>;
let hooks: Map<string, Hook>;
let jobs: Jobs;
let woken: number;
let deps: PeriodDeps;
/** Asia/Kolkata is UTC+05:30: its 21 November 2026 runs from 20 November 18:30 to 21 November 18:30 UTC. */
const clock = createClock('Asia/Kolkata');
const NOW = Date.parse('2026-11-25T00:00:00Z');

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
  const base = config.hooks.get('end-of-call')!;
  config.hooks.set('end-of-call', { ...base, sinks: ['crm'] });
  config.hooks.set('held', { ...base, name: 'held', on_problem: 'hold' as const, sinks: ['crm'] });
  config.hooks.set('other', { ...base, name: 'other', sinks: ['crm'] });
  before = compileHooks(config);
  for (const name of ['end-of-call', 'held'])
    config.hooks.set(name, { ...config.hooks.get(name)!, sinks: ['crm', 'orders'] });
  hooks = compileHooks(config, [
    { name: 'orders', when: { field: 'call_outcome', eq: 'order placed' }, testTraffic: false },
  ]);
  jobs = createJobs();
  woken = 0;
  deps = { store, hooks, sinkNames: ['crm', 'orders'], notify: () => woken++, clock, jobs, now: () => NOW };
});
afterEach(() => store.close());

/** Stores a call received at `at`, through the intake, with deliveries to the sinks its hook wants. */
async function receive(at: string, fields: Record<string, unknown> = {}, hook = 'end-of-call'): Promise<string> {
  const receipt = { hook, receivedAt: at, method: 'POST', contentType: 'application/json', size: 2 };
  const raw = { method: 'POST', content_type: 'application/json', query: {}, body: '{}' };
  const reply = await createIntake({ store })({
    hook: before.get(hook)!,
    fields: sampleCall(fields),
    raw,
    source: 'webhook',
    receipt,
    receivedAt: new Date(at),
  });
  return reply.id;
}

/** The job once it has ended. */
async function ended(job: RedeliveryJob): Promise<RedeliveryJob> {
  for (;;) {
    const now = jobs.get(job.id) as RedeliveryJob;
    if (now.state !== 'running') return now;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const sinksOf = async (id: string) => (await store.listDeliveries({ callId: id })).map((d) => [d.sink, d.state]);

describe('redeliverPeriod', () => {
  let calls: Record<string, string>;
  beforeEach(async () => {
    calls = {
      dayBefore: await receive('2026-11-20T18:29:59.999Z'),
      first: await receive('2026-11-20T18:30:00.000Z'),
      notAnOrder: await receive('2026-11-21T02:00:00.000Z', { call_outcome: 'not interested' }),
      held: await receive('2026-11-21T03:00:00.000Z', { call_duration: undefined }, 'held'),
      otherHook: await receive('2026-11-21T04:00:00.000Z', {}, 'other'),
      last: await receive('2026-11-21T18:29:59.999Z'),
      dayAfter: await receive('2026-11-21T18:30:00.000Z'),
    };
    // Stored before `orders` was added: their deliveries went to crm only. One is pending to orders already.
    expect(await store.redeliverCalls('orders', [calls.last!])).toBe(1);
  });

  it("sends the period's calls that the sink's route takes, days read in the zone, and none held or pending twice", async () => {
    const started = redeliverPeriod(deps, 'orders', { from: '2026-11-21', to: '2026-11-21' });
    expect(started).toMatchObject({
      kind: 'redeliver',
      state: 'running',
      sink: 'orders',
      from: '2026-11-20T18:30:00.000Z',
      to: '2026-11-21T18:30:00.000Z',
      dry_run: false,
      finished_at: null,
    });
    const job = await ended(started);
    expect(job).toMatchObject({
      state: 'done',
      total: 5,
      done: 5,
      queued: 1,
      skipped: { held: 1, not_for_sink: 2, pending: 1 },
      errors: [],
    });
    expect(job.finished_at).not.toBeNull();
    expect(await sinksOf(calls.first!)).toEqual([
      ['crm', 'pending'],
      ['orders', 'pending'],
    ]);
    for (const name of ['dayBefore', 'notAnOrder', 'held', 'otherHook', 'dayAfter'])
      expect(
        (await sinksOf(calls[name]!)).some(([sink]) => sink === 'orders'),
        name,
      ).toBe(false);
    expect(woken).toBe(1);

    // Again while they are pending: nothing is queued twice.
    const again = await ended(redeliverPeriod(deps, 'orders', { from: '2026-11-21', to: '2026-11-21' }));
    expect(again).toMatchObject({ queued: 0, skipped: { held: 1, not_for_sink: 2, pending: 2 } });
  });

  it('counts what a dry run would send and sends nothing; without `to`, runs up to its start', async () => {
    const job = await ended(redeliverPeriod(deps, 'orders', { from: '2026-11-20', dry_run: true }));
    // From the start of 20 November there, 19 November 18:30 UTC: every call stored.
    expect(job).toMatchObject({ dry_run: true, to: new Date(NOW).toISOString(), total: 7, queued: 3 });
    expect((await sinksOf(calls.first!)).map(([sink]) => sink)).toEqual(['crm']);
    expect(woken).toBe(0);
  });

  it('walks the period a chunk at a time, and takes ISO timestamps as instants, `to` excluded', async () => {
    const job = await ended(
      redeliverPeriod({ ...deps, chunk: 2 }, 'crm', {
        from: '2026-11-20T18:30:00.000Z',
        to: '2026-11-21T18:29:59.999Z',
      }),
    );
    // crm takes every call of its hooks, and each has its delivery there pending already (no worker runs here).
    expect(job).toMatchObject({ total: 4, done: 4, queued: 0, skipped: { held: 1, not_for_sink: 0, pending: 3 } });
  });

  it('refuses an unknown sink naming those there are, a date it cannot read and an empty period, with 400', () => {
    const refusal = (sink: string, request: { from: string; to?: string }) => {
      try {
        redeliverPeriod(deps, sink, request);
      } catch (err) {
        expect(err).toBeInstanceOf(CallhookError);
        return (err as CallhookError).message;
      }
      throw new Error('not refused');
    };
    expect(refusal('nowhere', { from: '2026-11-21' })).toBe(
      'Bad request: no sink is named nowhere (sinks: crm, orders)',
    );
    expect(refusal('crm', { from: '2026-02-30' })).toBe(
      'Bad request: from: must be a date (YYYY-MM-DD) or an ISO timestamp, got "2026-02-30"',
    );
    expect(refusal('crm', { from: '2026-11-21', to: 'yesterday' })).toMatch(/^Bad request: to: must be a date/);
    expect(refusal('crm', { from: '2026-11-22', to: '2026-11-21' })).toMatch(
      /^Bad request: the period from .* is empty/,
    );
    // Days still to come: nothing was received in them yet.
    expect(refusal('crm', { from: '2026-12-01' })).toMatch(/is empty/);
  });

  it('tries a failing chunk again, keeping the error, and fails the job after the last try', async () => {
    let failures = 1;
    const flaky: PeriodCalls = {
      ...store,
      periodCalls: async (query) => {
        if (failures-- > 0) throw new Error('database is locked');
        return store.periodCalls(query);
      },
    };
    const retried = await ended(
      redeliverPeriod({ ...deps, store: flaky, retryDelaysMs: [1] }, 'orders', { from: '2026-11-21' }),
    );
    expect(retried).toMatchObject({ state: 'done', queued: 2, errors: ['database is locked (trying again)'] });

    failures = 5;
    const failed = await ended(
      redeliverPeriod({ ...deps, store: flaky, retryDelaysMs: [1, 1] }, 'orders', { from: '2026-11-21' }),
    );
    expect(failed).toMatchObject({
      state: 'failed',
      errors: ['database is locked (trying again)', 'database is locked (trying again)', 'database is locked'],
    });
  });

  it('stops between two chunks when serve shuts down', async () => {
    let release = () => {};
    const slow: PeriodCalls = {
      ...store,
      periodCalls: async (query) => {
        await new Promise<void>((resolve) => (release = resolve));
        return store.periodCalls(query);
      },
    };
    const job = redeliverPeriod({ ...deps, store: slow, chunk: 1 }, 'crm', { from: '2026-11-21' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stopping = jobs.stop();
    release();
    await stopping;
    expect(jobs.get(job.id)).toMatchObject({ state: 'stopped', done: 1 });
  });
});
