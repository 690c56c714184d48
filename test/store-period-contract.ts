import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallStatus } from '../src/store/calls.js';
import type { AttemptResult } from '../src/store/outbox.js';
import { cursorAfter, type PeriodCall } from '../src/store/period-calls.js';
import type { Store } from '../src/store/store.js';
import { attemptOk, commitData, unique } from './helpers/store-inputs.js';
import type { StorePeek } from './store-contract.js';

/**
 * A period's redelivery to one sink (docs/reference.md#a-period-to-one-sink: `calls redeliver --sink NAME --from DATE`), as
 * every Store keeps it: the calls received in a period counted, read a chunk at a time in the order received with
 * their delivery to the sink, and sent to it: a missing delivery made, a done or dead one pending again, a pending or
 * in-flight one, a held call and a call not stored left alone. The calls sit in a year of their own (1999), so no
 * other test's calls fall in the period.
 */
export function storePeriodContract(name: string, open: () => Promise<Store>, peek: StorePeek): void {
  describe(`${name} store period redelivery contract`, () => {
    let a: Store;
    afterAll(() => a?.close());

    /** A period of its own: a random second of 1999, a millisecond per call. */
    const base = Date.UTC(1999, 0, 1) + Math.floor(Math.random() * 360 * 86_400) * 1000;
    const at = (ms: number) => new Date(base + ms).toISOString();
    const period = { from: at(0), to: at(100) };

    /** Claims the sink's one due delivery and finishes it (undefined: leaves it in flight). */
    async function attempt(sink: string, result?: AttemptResult): Promise<void> {
      const [claimed] = await a.claimDeliveries(sink, 1, 60_000);
      expect(claimed).toBeDefined();
      if (result) expect(await a.finishAttempt(claimed!.id, 1, result)).toBe(true);
    }

    let sink: string;
    let calls: Record<string, string>;
    beforeAll(async () => {
      a = await open();
      sink = unique('sink');
      const hook = unique('hook');
      const call = (ms: number, status: CallStatus = 'accepted', sinks: string[] = []) =>
        commitData(a, hook, { first_name: 'Asha' }, at(ms), status, sinks);
      // Committed in an order that leaves each delivery of the sink as named: the claims take the oldest due first.
      const done = await call(10, 'accepted', [sink]);
      await attempt(sink, attemptOk);
      const dead = await call(20, 'accepted', [sink]);
      await attempt(sink, { ...attemptOk, outcome: 'dead', httpStatus: 400, error: 'HTTP 400' });
      const inFlight = await call(30, 'accepted', [sink]);
      await attempt(sink);
      calls = {
        before: await call(-1),
        first: await call(0),
        done,
        dead,
        inFlight,
        pending: await call(40, 'accepted', [sink]),
        held: await call(50, 'held'),
        // Two calls of one millisecond: the cursor goes on from the first to the second by id.
        twinA: await call(60),
        twinB: await call(60),
        last: await call(99),
        after: await call(100),
      };
    });

    it('counts the calls received in [from, to)', async () => {
      expect(await a.countPeriod(period.from, period.to)).toBe(9);
      expect(await a.countPeriod(at(0), at(60))).toBe(6);
      expect(await a.countPeriod(at(-1), at(101))).toBe(11);
    });

    it('reads the period a chunk at a time, in the order received, each call once, with its delivery to the sink', async () => {
      const read: PeriodCall[] = [];
      let after: PeriodCall | undefined;
      for (let chunks = 0; chunks < 10; chunks++) {
        const chunk = await a.periodCalls({ ...period, sink, limit: 2, after: after && cursorAfter(after) });
        read.push(...chunk);
        if (chunk.length < 2) break;
        after = chunk.at(-1);
      }
      const twins = [calls.twinA!, calls.twinB!].sort();
      expect(read.map((c) => [c.record.id, c.status, c.delivery])).toEqual([
        [calls.first, 'accepted', null],
        [calls.done, 'accepted', 'done'],
        [calls.dead, 'accepted', 'dead'],
        [calls.inFlight, 'accepted', 'in_flight'],
        [calls.pending, 'accepted', 'pending'],
        [calls.held, 'held', null],
        [twins[0], 'accepted', null],
        [twins[1], 'accepted', null],
        [calls.last, 'accepted', null],
      ]);
      expect(read[0]!.record).toMatchObject({ id: calls.first, received_at: at(0), data: { first_name: 'Asha' } });
      // Another sink: the calls have no delivery to it.
      const other = await a.periodCalls({ ...period, sink: unique('sink'), limit: 100 });
      expect(other.map((c) => c.delivery)).toEqual(Array(9).fill(null));
    });

    it('sends the calls named to the sink: missing, done and dead ones made pending; pending, in flight, held and unknown ones left', async () => {
      const named = [calls.first, calls.done, calls.dead, calls.inFlight, calls.pending, calls.held, 'no-such-call'];
      expect(await a.redeliverCalls(sink, [...(named as string[]), calls.first!])).toBe(3);
      expect(await peek.deliveries(calls.first!)).toEqual([{ sink, state: 'pending', attempts: 0 }]);
      expect(await peek.deliveries(calls.done!)).toEqual([{ sink, state: 'pending', attempts: 0 }]);
      expect(await peek.deliveries(calls.dead!)).toEqual([{ sink, state: 'pending', attempts: 0 }]);
      expect(await peek.deliveries(calls.inFlight!)).toEqual([{ sink, state: 'in_flight', attempts: 1 }]);
      expect(await peek.deliveries(calls.held!)).toEqual([]);
      // Made again while they are pending: nothing is queued twice.
      expect(await a.redeliverCalls(sink, named as string[])).toBe(0);
      expect(await a.redeliverCalls(sink, [])).toBe(0);
      const pending = await a.listDeliveries({ sink, state: 'pending', limit: 100 });
      expect(pending.map((d) => d.callId).sort()).toEqual(
        [calls.first, calls.done, calls.dead, calls.pending].sort() as string[],
      );
      // Counted as every other delivery: /metrics and the sinks' figures follow.
      const stats = (await a.deliveryStats()).filter((s) => s.sink === sink);
      expect(stats.map((s) => [s.state, s.count])).toEqual([
        ['in_flight', 1],
        ['pending', 4],
      ]);
    });
  });
}
