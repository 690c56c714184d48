import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallhookError } from '../errors.js';
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
