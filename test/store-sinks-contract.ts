import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isFailing } from '../src/store/sink-state.js';
import type { Store } from '../src/store/store.js';
import { attemptOk, commitInput, sleep, unique } from './helpers/store-inputs.js';
import type { StorePeek } from './store-contract.js';

/**
 * What every Store keeps of a sink besides its deliveries (docs/reference.md#what-every-sink-shares): an operator's
 * pause, the config's `paused` when no operator ever said, a 429's wait for every instance, and the last success and
 * error, run against each implementation. Two instances stand for two replicas (or a serve and its restart).
 */
export function storeSinksContract(name: string, open: () => Promise<Store>, peek: StorePeek): void {
  describe(`${name} store sink state contract`, () => {
    let a: Store;
    let b: Store;
    beforeAll(async () => {
      a = await open();
      b = await open();
    });
    afterAll(async () => {
      await a?.close();
      await b?.close();
    });

    /** Commits `count` calls, each with a delivery to `sink`; returns their call ids. */
    async function pending(sink: string, count: number): Promise<string[]> {
      const hook = unique('hook');
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await a.commitCall(commitInput(hook, `call_id:${i}`, [sink]))).id);
      return ids;
    }
    const stateOf = async (store: Store, sink: string) => (await store.sinkStates()).find((s) => s.sink === sink);

    it('claims nothing of a sink an operator paused, on any instance, spending no attempt, until it is resumed', async () => {
      const sink = unique('sink');
      const ids = await pending(sink, 3);
      await a.setSinkPaused(sink, true);
      expect(await b.claimDeliveries(sink, 10, 60_000)).toEqual([]);
      expect(await a.claimDeliveries(sink, 10, 60_000)).toEqual([]);
      expect(await b.nextDueIn(sink)).toBeUndefined();
      for (const id of ids) expect(await peek.deliveries(id)).toEqual([{ sink, state: 'pending', attempts: 0 }]);
      expect(await stateOf(b, sink)).toMatchObject({ sink, paused: true, pausedUntil: null });
      expect((await stateOf(b, sink))!.pausedChangedAt).toBeGreaterThan(Date.now() - 60_000);

      // Another sink is not held by it.
      const other = unique('sink');
      await pending(other, 1);
      expect(await b.claimDeliveries(other, 10, 60_000)).toHaveLength(1);

      await b.setSinkPaused(sink, false);
      expect(await a.nextDueIn(sink)).toBe(0);
      const claimed = await a.claimDeliveries(sink, 10, 60_000);
      expect(claimed.map((d) => d.attempt)).toEqual([1, 1, 1]);
      expect(await stateOf(a, sink)).toMatchObject({ paused: false });
    });

    it('holds a sink the config pauses only while no operator has said otherwise: the stored state wins', async () => {
      const sink = unique('sink');
      await pending(sink, 2);
      expect(await a.claimDeliveries(sink, 10, 60_000, true)).toEqual([]);
      expect(await a.nextDueIn(sink, true)).toBeUndefined();
      expect(await stateOf(a, sink)).toBeUndefined();
      await b.setSinkPaused(sink, false);
      // Resumed by an operator: the config's `paused: true` no longer holds it.
      expect(await a.claimDeliveries(sink, 1, 60_000, true)).toHaveLength(1);
      await a.setSinkPaused(sink, true);
      // Paused by an operator: a config without `paused` does not release it.
      expect(await b.claimDeliveries(sink, 10, 60_000, false)).toEqual([]);
    });

    it('waits out a 429 on every instance: the attempt that met it counts, the other deliveries spend none', async () => {
      const sink = unique('sink');
      const ids = await pending(sink, 4);
      const [first] = await a.claimDeliveries(sink, 1, 60_000);
      const until = Date.now() + 600;
      const limited = { ...attemptOk, outcome: 'retry' as const, httpStatus: 429, error: 'HTTP 429: slow down' };
      expect(await a.finishAttempt(first!.id, 1, limited, until, until)).toBe(true);

      expect(await b.claimDeliveries(sink, 10, 60_000)).toEqual([]);
      expect(await a.claimDeliveries(sink, 10, 60_000)).toEqual([]);
      const dueIn = await b.nextDueIn(sink);
      expect(dueIn).toBeGreaterThan(300);
      expect(dueIn).toBeLessThanOrEqual(600);
      expect(await stateOf(b, sink)).toMatchObject({
        paused: null,
        pausedUntil: until,
        lastError: 'HTTP 429: slow down',
      });
      const attempts = await Promise.all(ids.map(async (id) => (await peek.deliveries(id))[0]!.attempts));
      expect(attempts).toEqual([1, 0, 0, 0]);

      // A shorter wait given meanwhile never cuts the pause short.
      await a.recordSinkError(sink, 'another error');
      expect(await stateOf(a, sink)).toMatchObject({ pausedUntil: until, lastError: 'another error' });

      await sleep(Math.max(0, until - Date.now()) + 20);
      const after = await b.claimDeliveries(sink, 10, 60_000);
      expect(after.map((d) => [d.record.id, d.attempt])).toEqual(ids.map((id, i) => [id, i === 0 ? 2 : 1]));
    });

    it('keeps the last success and the last error of a sink, with their times, and a start-up error without an attempt', async () => {
      const sink = unique('sink');
      await pending(sink, 3);
      const before = Date.now();
      await a.recordSinkError(sink, 'cannot connect: ECONNREFUSED');
      expect(await stateOf(b, sink)).toMatchObject({
        lastError: 'cannot connect: ECONNREFUSED',
        lastSuccessAt: null,
        paused: null,
        pausedUntil: null,
      });
      expect((await stateOf(b, sink))!.lastErrorAt).toBeGreaterThanOrEqual(before);

      const [ok, failed, dead] = await a.claimDeliveries(sink, 3, 60_000);
      await a.finishAttempt(ok!.id, 1, attemptOk);
      const state = await stateOf(b, sink);
      expect(state!.lastSuccessAt).toBeGreaterThanOrEqual(before);
      expect(state!.lastError).toBe('cannot connect: ECONNREFUSED');
      await b.finishAttempt(
        failed!.id,
        1,
        { ...attemptOk, outcome: 'retry', httpStatus: 503, error: 'HTTP 503: down' },
        Date.now() + 60_000,
      );
      expect(await stateOf(a, sink)).toMatchObject({
        lastError: 'HTTP 503: down',
        lastSuccessAt: state!.lastSuccessAt,
        pausedUntil: null,
      });
      await a.finishAttempt(dead!.id, 1, {
        ...attemptOk,
        outcome: 'dead',
        httpStatus: 400,
        error: 'HTTP 400: bad field',
      });
      expect(await stateOf(b, sink)).toMatchObject({ lastError: 'HTTP 400: bad field' });

      // An attempt that was not ours to finish (its lease taken over) leaves the sink's state as it was.
      expect(await a.finishAttempt(dead!.id, 1, { ...attemptOk, outcome: 'retry', error: 'late' }, Date.now())).toBe(
        false,
      );
      expect(await stateOf(b, sink)).toMatchObject({ lastError: 'HTTP 400: bad field' });
    });

    it('writes the first success after a failure at once, within the second of the success before it', async () => {
      const sink = unique('sink');
      await pending(sink, 3);
      const [first, failed, second] = await a.claimDeliveries(sink, 3, 60_000);
      // A few milliseconds apart, so each is newer than the one before it, and all within a second.
      await a.finishAttempt(first!.id, 1, attemptOk);
      await sleep(5);
      const down = { ...attemptOk, outcome: 'retry' as const, httpStatus: 503, error: 'HTTP 503: down' };
      await b.finishAttempt(failed!.id, 1, down, Date.now() + 60_000);
      const failing = (await stateOf(a, sink))!;
      expect(failing.lastErrorAt).toBeGreaterThan(failing.lastSuccessAt!);
      expect(isFailing(failing)).toBe(true);
      await sleep(5);
      // Held back, this success would leave the failure the newer of the two, and the sink failing while it delivers.
      await a.finishAttempt(second!.id, 1, attemptOk);
      const delivering = (await stateOf(b, sink))!;
      expect(delivering.lastSuccessAt).toBeGreaterThan(failing.lastErrorAt!);
      expect(delivering).toMatchObject({ lastError: 'HTTP 503: down', lastErrorAt: failing.lastErrorAt });
      expect(isFailing(delivering)).toBe(false);
    });

    it('lists one state per sink that has any, in name order', async () => {
      const [s1, s2] = [unique('sink'), unique('sink')].sort() as [string, string];
      await a.setSinkPaused(s2, true);
      await b.recordSinkError(s1, 'down');
      const listed = (await a.sinkStates()).filter((s) => s.sink === s1 || s.sink === s2);
      expect(listed.map((s) => [s.sink, s.paused, s.lastError])).toEqual([
        [s1, null, 'down'],
        [s2, true, null],
      ]);
    });
  });
}
