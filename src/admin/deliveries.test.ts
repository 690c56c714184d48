import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attemptOk, commitInput, unique } from '../../test/helpers/store-inputs.js';
import { CallhookError } from '../errors.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { type DeliveryOperations, deliveryOperations } from './deliveries.js';

/**
 * The delivery operations (docs/reference.md#operating) on a real store: what a list pages, what a retry resets and
 * when it wakes the worker.
 */

let store: Store;
let ops: DeliveryOperations;
let woken = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  woken = 0;
  ops = deliveryOperations({ store, notify: () => woken++ });
});
afterEach(() => store.close());

/**
 * A call with a delivery to each sink; each sink's delivery ends as `outcome` ('dead', 'ok') or stays pending
 * (undefined).
 */
async function call(sinks: Record<string, 'dead' | 'ok' | undefined>): Promise<string> {
  const { id } = await store.commitCall(commitInput('end-of-call', `call_id:${unique('c')}`, Object.keys(sinks)));
  for (const [sink, outcome] of Object.entries(sinks)) {
    if (!outcome) continue;
    const [claimed] = await store.claimDeliveries(sink, 1, 60_000);
    await store.finishAttempt(claimed!.id, claimed!.attempt, {
      ...attemptOk,
      outcome,
      ...(outcome === 'dead' ? { httpStatus: 400, error: 'HTTP 400' } : {}),
    });
  }
  return id;
}

const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallhookError);
  return { status: (err as CallhookError).status, message: (err as CallhookError).message };
};

describe('listDeliveries', () => {
  it('filters by state, sink and call, and pages by id with the next cursor null on the last page', async () => {
    const first = await call({ crm: 'dead', jsonl: 'ok' });
    const second = await call({ crm: 'dead', jsonl: undefined });
    expect((await ops.listDeliveries({ state: 'dead', limit: 50 })).deliveries.map((d) => [d.callId, d.sink])).toEqual([
      [first, 'crm'],
      [second, 'crm'],
    ]);
    expect((await ops.listDeliveries({ sink: 'jsonl', limit: 50 })).deliveries.map((d) => d.state)).toEqual([
      'done',
      'pending',
    ]);
    expect((await ops.listDeliveries({ callId: second, limit: 50 })).deliveries).toHaveLength(2);

    const page = await ops.listDeliveries({ limit: 3 });
    expect(page.deliveries).toHaveLength(3);
    expect(page.next).toBe(page.deliveries[2]!.id);
    const rest = await ops.listDeliveries({ limit: 3, after: page.next! });
    expect(rest).toEqual({ deliveries: [expect.objectContaining({ callId: second, sink: 'jsonl' })], next: null });
  });
});

describe('retryDeliveries', () => {
  it('makes dead deliveries pending with a fresh attempt count, by default only dead ones, and wakes the worker', async () => {
    await call({ crm: 'dead', jsonl: 'ok' });
    await call({ crm: 'dead', jsonl: 'dead' });
    expect(await ops.countRetryable()).toBe(3);
    expect(await ops.countRetryable({ sink: 'crm' })).toBe(2);
    expect(await ops.retryDeliveries({ sink: 'crm' })).toEqual({ retried: 2 });
    expect(woken).toBe(1);
    const crm = (await ops.listDeliveries({ sink: 'crm', limit: 50 })).deliveries;
    expect(crm.map((d) => [d.state, d.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
    ]);
    // The done one is never retried; the dead one left is.
    expect(await ops.retryDeliveries()).toEqual({ retried: 1 });
    expect(await ops.countRetryable()).toBe(0);
  });

  it('refuses a retry naming a sink the serve does not have, naming the ones it has; without the list any name is taken', async () => {
    await call({ crm: 'dead' });
    const known = deliveryOperations({ store, notify: () => woken++, sinkNames: ['crm', 'file'] });
    await expect(known.retryDeliveries({ sink: 'cmr' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('no sink is named cmr (sinks: crm, file)'),
    });
    expect(await known.retryDeliveries({ sink: 'crm' })).toEqual({ retried: 1 });
    expect(await ops.retryDeliveries({ sink: 'cmr' })).toEqual({ retried: 0 });
  });

  it('does not wake the worker when nothing matched', async () => {
    await call({ crm: 'ok' });
    expect(await ops.retryDeliveries({ state: 'dead' })).toEqual({ retried: 0 });
    expect(woken).toBe(0);
  });

  it('makes pending deliveries due now when asked for state pending', async () => {
    await call({ crm: undefined });
    expect(await ops.countRetryable({ state: 'pending' })).toBe(1);
    expect(await ops.retryDeliveries({ state: 'pending' })).toEqual({ retried: 1 });
  });
});

describe('retryDelivery', () => {
  it('retries one dead delivery, and refuses one that is not dead (409) or no delivery at all (404)', async () => {
    await call({ crm: 'dead', jsonl: 'ok' });
    const [dead, done] = (await ops.listDeliveries({ limit: 50 })).deliveries;
    expect(await ops.retryDelivery(String(dead!.id))).toEqual({ retried: 1 });
    expect(woken).toBe(1);
    expect(await refusal(ops.retryDelivery(dead!.id))).toEqual({
      status: 409,
      message: `Conflict: delivery ${dead!.id} does not exist or is not dead`,
    });
    expect(await refusal(ops.retryDelivery(done!.id))).toMatchObject({ status: 409 });
    expect(await refusal(ops.retryDelivery(999_999))).toMatchObject({ status: 409 });
    for (const id of ['0', '-1', '1.5', 'abc', ''])
      expect(await refusal(ops.retryDelivery(id))).toEqual({
        status: 404,
        message: `Not found: no delivery with id ${id}`,
      });
    expect(woken).toBe(1);
  });
});
