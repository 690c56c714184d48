import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import type { Scalar } from '../src/record.js';
import type { CallStatus } from '../src/store/calls.js';
import type { AttemptResult, ClaimedDelivery } from '../src/store/outbox.js';
import type { Store } from '../src/store/store.js';
import { attemptOk, commitData, commitInput, sleep, unique } from './helpers/store-inputs.js';
import type { StorePeek } from './store-contract.js';

/**
 * The delivery admin every Store keeps (docs/reference.md#metrics: list, retry, redeliver, release, counts for
 * /metrics), run against each implementation. Like the core contract, tests share one database and work under
 * their own hook and sink names.
 */
export function storeAdminContract(name: string, open: () => Promise<Store>, peek: StorePeek): void {
  describe(`${name} store admin contract`, () => {
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

    const call = (hook: string, data: Record<string, Scalar>, at: string, status?: CallStatus, sinks?: string[]) =>
      commitData(a, hook, data, at, status, sinks);
    const dead: AttemptResult = { ...attemptOk, outcome: 'dead', httpStatus: 400, error: 'HTTP 400' };
    /** Claims the one due delivery of a sink and finishes it with this result. */
    async function attempt(sink: string, result: AttemptResult = attemptOk): Promise<ClaimedDelivery> {
      const [claimed] = await a.claimDeliveries(sink, 1, 60_000);
      expect(claimed).toBeDefined();
      expect(await a.finishAttempt(claimed!.id, claimed!.attempt, result)).toBe(true);
      return claimed!;
    }

    it('lists deliveries by state, sink and call, in id order, after a cursor', async () => {
      const [sink, other] = [unique('sink'), unique('sink')];
      const hook = unique('hook');
      const calls = [];
      for (let i = 0; i < 3; i++) calls.push(await call(hook, {}, new Date().toISOString(), 'accepted', [sink, other]));
      const all = await a.listDeliveries({ sink });
      expect(all.map((d) => [d.callId, d.sink, d.state, d.attempts, d.lastError])).toEqual(
        calls.map((id) => [id, sink, 'pending', 0, null]),
      );
      expect(all.every((d) => d.nextAttemptAt <= Date.now() && d.updatedAt <= Date.now())).toBe(true);

      const [claimed] = await a.claimDeliveries(sink, 1, 60_000);
      const retryAt = Date.now() + 3_600_000;
      await a.finishAttempt(
        claimed!.id,
        1,
        { ...attemptOk, outcome: 'retry', httpStatus: 503, error: 'HTTP 503' },
        retryAt,
      );
      await a.claimDeliveries(sink, 1, 60_000);
      expect(await a.listDeliveries({ sink, state: 'in_flight' })).toMatchObject([{ id: all[1]!.id, attempts: 1 }]);
      expect(await a.listDeliveries({ sink, state: 'pending' })).toEqual([
        { ...all[0], attempts: 1, nextAttemptAt: retryAt, lastError: 'HTTP 503', updatedAt: expect.any(Number) },
        all[2],
      ]);
      expect((await a.listDeliveries({ callId: calls[0]! })).map((d) => d.sink)).toEqual([sink, other]);
      expect((await a.listDeliveries({ callId: calls[0]!, sink: other })).map((d) => d.sink)).toEqual([other]);
      expect((await a.listDeliveries({ sink, limit: 2 })).map((d) => d.id)).toEqual([all[0]!.id, all[1]!.id]);
      expect((await a.listDeliveries({ sink, after: all[1]!.id })).map((d) => d.id)).toEqual([all[2]!.id]);
      expect(await a.listDeliveries({ sink, state: 'dead' })).toEqual([]);
      expect((await a.listDeliveries({ state: 'in_flight', limit: 1000 })).some((d) => d.id === all[1]!.id)).toBe(true);
    });

    it('lists the attempts and the receipts of a call, oldest first', async () => {
      const [s1, s2] = [unique('sink'), unique('sink')];
      const hook = unique('hook');
      const input = commitInput(hook, 'call_id:1', [s1, s2]);
      const { id } = await a.commitCall(input);
      const again = commitInput(hook, 'call_id:1', [s1, s2], Date.now() + 1);
      await a.commitCall({ ...again, receipt: { ...again.receipt, method: 'GET', contentType: null, size: 0 } });

      const retried = await attempt(s1, {
        ...attemptOk,
        startedAt: '2087-01-01T00:00:00.000Z',
        outcome: 'retry',
        httpStatus: 503,
        error: 'HTTP 503',
      });
      await attempt(s1, {
        ...attemptOk,
        startedAt: '2087-01-01T00:00:01.000Z',
        durationMs: 3.25,
        note: '2 contacts matched; used the newest',
      });
      const failed = await attempt(s2, { ...dead, startedAt: '2087-01-01T00:00:02.000Z' });
      expect(await a.listAttempts(id)).toEqual([
        {
          deliveryId: retried.id,
          sink: s1,
          attempt: 1,
          startedAt: '2087-01-01T00:00:00.000Z',
          durationMs: 12.5,
          outcome: 'retry',
          httpStatus: 503,
          error: 'HTTP 503',
          note: null,
        },
        {
          deliveryId: retried.id,
          sink: s1,
          attempt: 2,
          startedAt: '2087-01-01T00:00:01.000Z',
          durationMs: 3.25,
          outcome: 'ok',
          httpStatus: 200,
          error: null,
          note: '2 contacts matched; used the newest',
        },
        {
          deliveryId: failed.id,
          sink: s2,
          attempt: 1,
          startedAt: '2087-01-01T00:00:02.000Z',
          durationMs: 12.5,
          outcome: 'dead',
          httpStatus: 400,
          error: 'HTTP 400',
          note: null,
        },
      ]);
      const receipts = await a.listReceipts(id);
      const none = { hook, callId: id, error: null, rawBody: null, query: null, ingestedAs: null };
      expect(receipts).toEqual([
        {
          ...none,
          id: expect.any(Number),
          receivedAt: input.receipt.receivedAt,
          method: 'POST',
          contentType: 'application/json',
          size: 21,
          status: 200,
          outcome: 'accepted',
        },
        {
          ...none,
          id: expect.any(Number),
          receivedAt: again.receipt.receivedAt,
          method: 'GET',
          contentType: null,
          size: 0,
          status: 200,
          outcome: 'duplicate',
        },
      ]);
      expect(receipts[0]!.id).toBeLessThan(receipts[1]!.id);
      expect(await a.getReceipt(receipts[1]!.id)).toEqual(receipts[1]);
      expect(await a.listAttempts(newId())).toEqual([]);
      expect(await a.listReceipts(newId())).toEqual([]);
    });

    it('retries dead deliveries by sink, by call or by ids, never one in flight', async () => {
      const [sa, sb] = [unique('sink'), unique('sink')];
      const hook = unique('hook');
      const at = new Date().toISOString();
      const [c1, c2, c3] = [
        await call(hook, {}, at, 'accepted', [sa, sb]),
        await call(hook, {}, at, 'accepted', [sa, sb]),
        await call(hook, {}, at, 'accepted', [sa, sb]),
      ];
      const [a1, a2] = [await attempt(sa, dead), await attempt(sa, dead)];
      const [b1, b2] = [await attempt(sb, dead), await attempt(sb, dead)];
      const [a3] = await a.claimDeliveries(sa, 1, 60_000);
      expect([a1.record.id, a2.record.id, a3!.record.id, b1.record.id, b2.record.id]).toEqual([c1, c2, c3, c1, c2]);
      const state = async (sink: string) => (await a.listDeliveries({ sink })).map((d) => [d.state, d.attempts]);

      expect(await a.retryDeliveries({ sink: sa })).toBe(2);
      expect(await state(sa)).toEqual([
        ['pending', 0],
        ['pending', 0],
        ['in_flight', 1],
      ]);
      expect(await state(sb)).toEqual([
        ['dead', 1],
        ['dead', 1],
        ['pending', 0],
      ]);
      // The history stays; the next attempt counts from 1 again.
      expect(await peek.attempts(a1.id)).toEqual([{ attempt: 1, outcome: 'dead', httpStatus: 400 }]);
      expect((await a.claimDeliveries(sa, 5, 60_000)).map((d) => [d.id, d.attempt])).toEqual([
        [a1.id, 1],
        [a2.id, 1],
      ]);

      expect(await a.retryDeliveries({ callId: c1 })).toBe(1);
      expect(await state(sb)).toEqual([
        ['pending', 0],
        ['dead', 1],
        ['pending', 0],
      ]);
      expect(await a.retryDeliveries({ ids: [b2.id, a3!.id, a1.id] })).toBe(1);
      expect(await state(sb)).toEqual([
        ['pending', 0],
        ['pending', 0],
        ['pending', 0],
      ]);
      expect(await state(sa)).toEqual([
        ['in_flight', 1],
        ['in_flight', 1],
        ['in_flight', 1],
      ]);
      expect(await a.retryDeliveries({ ids: [] })).toBe(0);
      expect(await a.retryDeliveries({ sink: sa, state: 'pending' })).toBe(0);
      await expect(a.retryDeliveries({ sink: sa, state: 'in_flight' as never })).rejects.toThrow(/dead or pending/);
    });

    it('retries pending deliveries on request, due now', async () => {
      const sink = unique('sink');
      await call(unique('hook'), {}, new Date().toISOString(), 'accepted', [sink]);
      const [claimed] = await a.claimDeliveries(sink, 1, 60_000);
      await a.finishAttempt(claimed!.id, 1, { ...attemptOk, outcome: 'retry' }, Date.now() + 3_600_000);
      expect(await a.claimDeliveries(sink, 1, 60_000)).toEqual([]);
      expect(await a.retryDeliveries({ sink })).toBe(0);
      expect(await a.retryDeliveries({ sink, state: 'pending' })).toBe(1);
      expect(await a.claimDeliveries(sink, 1, 60_000)).toMatchObject([{ id: claimed!.id, attempt: 1 }]);
    });

    it('redelivers a call: done and dead ones again, missing ones created, pending and in flight left alone', async () => {
      const [done, failed, pending, leased, missing] = [
        unique('done'),
        unique('dead'),
        unique('pending'),
        unique('leased'),
        unique('missing'),
      ];
      const id = await call(unique('hook'), {}, new Date().toISOString(), 'accepted', [done, failed, pending, leased]);
      await attempt(done);
      await attempt(failed, dead);
      await a.claimDeliveries(leased, 1, 60_000);

      expect(await a.redeliver(id, [done, failed, pending, leased, missing, missing])).toBe(3);
      const bySink = new Map((await a.listDeliveries({ callId: id })).map((d) => [d.sink, [d.state, d.attempts]]));
      expect(Object.fromEntries(bySink)).toEqual({
        [done]: ['pending', 0],
        [failed]: ['pending', 0],
        [pending]: ['pending', 0],
        [leased]: ['in_flight', 1],
        [missing]: ['pending', 0],
      });
      expect((await a.claimDeliveries(done, 1, 60_000))[0]).toMatchObject({ attempt: 1, record: { id } });
      expect(await a.redeliver(id, [pending, leased])).toBe(0);
      expect(await a.redeliver(id, [])).toBe(0);
      expect(await a.redeliver(newId(), [done])).toBeUndefined();
    });

    it('releases a held call once, creating its deliveries with it', async () => {
      const [s1, s2] = [unique('sink'), unique('sink')];
      const hook = unique('hook');
      const held = await call(hook, {}, new Date().toISOString(), 'held');
      const accepted = await call(hook, {}, new Date().toISOString());
      expect(await a.release(accepted, [s1])).toBe(false);
      expect(await peek.deliveries(accepted)).toEqual([]);
      expect(await a.release(newId(), [s1])).toBe(false);

      // Two instances at once: one releases, the other finds the call accepted.
      const results = await Promise.all([a.release(held, [s1, s2, s1]), b.release(held, [s1, s2])]);
      expect(results.sort()).toEqual([false, true]);
      expect((await a.getCall(held))?.status).toBe('accepted');
      expect(await peek.deliveries(held)).toEqual([
        { sink: [s1, s2].sort()[0], state: 'pending', attempts: 0 },
        { sink: [s1, s2].sort()[1], state: 'pending', attempts: 0 },
      ]);
      expect(await a.release(held, [s1])).toBe(false);

      // A delivery a redeliver already made for a held call is kept as it is.
      const [s3, s4] = [unique('sink'), unique('sink')];
      const early = await call(hook, {}, new Date().toISOString(), 'held');
      await a.redeliver(early, [s3]);
      await attempt(s3);
      expect(await a.release(early, [s3, s4])).toBe(true);
      expect((await a.listDeliveries({ callId: early })).map((d) => [d.sink, d.state])).toEqual([
        [s3, 'done'],
        [s4, 'pending'],
      ]);
    });

    it("counts deliveries by sink and state, with the oldest pending one's creation time", async () => {
      const sink = unique('sink');
      const hook = unique('hook');
      const created: [number, number][] = [];
      for (let i = 0; i < 5; i++) {
        const before = Date.now();
        await call(hook, {}, new Date().toISOString(), 'accepted', [sink]);
        created.push([before, Date.now()]);
        await sleep(5);
      }
      await attempt(sink);
      await attempt(sink, dead);
      await a.claimDeliveries(sink, 1, 60_000);
      const stats = (await a.deliveryStats()).filter((s) => s.sink === sink);
      expect(stats.map(({ oldestCreatedAt, ...rest }) => rest)).toEqual([
        { sink, state: 'dead', count: 1 },
        { sink, state: 'done', count: 1 },
        { sink, state: 'in_flight', count: 1 },
        { sink, state: 'pending', count: 2 },
      ]);
      expect(stats.slice(0, 3).map((s) => s.oldestCreatedAt)).toEqual([null, null, null]);
      // Claims take the oldest first, so the fourth commit is the oldest still pending.
      expect(stats[3]!.oldestCreatedAt).toBeGreaterThanOrEqual(created[3]![0]);
      expect(stats[3]!.oldestCreatedAt).toBeLessThanOrEqual(created[3]![1]);
    });
  });
}
