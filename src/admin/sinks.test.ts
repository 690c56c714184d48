import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallhookError } from '../errors.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { SinkState } from '../store/sink-state.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { listSinks, pauseSink, type SinksDeps } from './sinks.js';

/**
 * Pause and resume (docs/reference.md#what-every-sink-shares) as every caller makes them: kept in the store, a resume
 * waking the worker.
 */

let store: Store;
let deps: SinksDeps;
let woken = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  woken = 0;
  deps = {
    store,
    sinks: [
      { name: 'crm', type: 'webhook', pausedByDefault: false },
      { name: 'sheet', type: 'google-sheets', pausedByDefault: true },
    ],
    notify: () => woken++,
  };
});
afterEach(() => store.close());

describe('pauseSink', () => {
  it("keeps an operator's pause and resume over the config's, and wakes the worker on a resume only", async () => {
    expect((await listSinks(deps)).map((s) => [s.name, s.paused, s.paused_by])).toEqual([
      ['crm', false, 'config'],
      ['sheet', true, 'config'],
    ]);
    expect(await pauseSink(deps, 'crm', true)).toMatchObject({ name: 'crm', paused: true, paused_by: 'operator' });
    expect(woken).toBe(0);
    expect(await pauseSink(deps, 'sheet', false)).toMatchObject({
      name: 'sheet',
      paused: false,
      paused_by: 'operator',
    });
    expect(woken).toBe(1);
  });

  it('refuses a sink that is not configured with a 404 naming the sinks there are', async () => {
    const err = await pauseSink(deps, 'nowhere', true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CallhookError);
    expect((err as CallhookError).message).toBe('Not found: no sink is named nowhere (sinks: crm, sheet)');
    expect(woken).toBe(0);
  });
});

describe('listSinks', () => {
  const HOUR = 3_600_000;
  /** The sinks as listed from these kept states, with no delivery stored. */
  const listed = (states: Partial<SinkState>[]) =>
    listSinks({
      store: {
        deliveryStats: async () => [],
        sinkStates: async () => states.map((s) => ({ ...EMPTY, ...s }) as SinkState),
      } as unknown as AdminQueries,
      sinks: ['old', 'now', 'never', 'calm', 'held'].map((name) => ({ name, type: 'http', pausedByDefault: false })),
    });
  const EMPTY: SinkState = {
    sink: '',
    paused: null,
    pausedChangedAt: null,
    pausedUntil: null,
    lastSuccessAt: null,
    lastError: null,
    lastErrorAt: null,
  };

  it('calls a sink failing only while its last error is newer than its last success: an older one is history', async () => {
    const now = Date.now();
    const sinks = await listed([
      { sink: 'old', lastError: 'HTTP 503', lastErrorAt: now - 2 * HOUR, lastSuccessAt: now - HOUR },
      { sink: 'now', lastError: 'HTTP 503', lastErrorAt: now - HOUR, lastSuccessAt: now - 2 * HOUR },
      { sink: 'never', lastError: 'cannot connect', lastErrorAt: now - HOUR },
      { sink: 'calm', lastSuccessAt: now - HOUR },
      { sink: 'held', paused: true, lastError: 'HTTP 503', lastErrorAt: now - HOUR },
    ]);
    expect(sinks.map((s) => [s.name, s.state, s.failing, s.last_error])).toEqual([
      ['old', 'running', false, 'HTTP 503'],
      ['now', 'failing', true, 'HTTP 503'],
      ['never', 'failing', true, 'cannot connect'],
      ['calm', 'running', false, null],
      ['held', 'paused', true, 'HTTP 503'],
    ]);
    // The failure kept as history keeps its time, for the page to say when it was.
    expect(sinks[0]!.last_error_at).toBe(new Date(now - 2 * HOUR).toISOString());
  });
});
