import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { contentHash } from '../src/normalize/dedup-key.js';
import type { RecordSource, Scalar } from '../src/record.js';
import type { ReconcileRun } from '../src/store/reconcile-run.js';
import type { Store } from '../src/store/store.js';
import { attemptOk, commitInput, sleep, unique } from './helpers/store-inputs.js';

/**
 * The behaviour every Store keeps, run against each implementation. Tests share one database, so each one works
 * under its own hook and sink names and measures counts as differences.
 */

/** What the Store interface does not read back, taken straight from the implementation's tables. */
export interface StorePeek {
  receipts(hook: string): Promise<ReceiptRow[]>;
  deliveries(callId: string): Promise<DeliveryRow[]>;
  attempts(deliveryId: number): Promise<AttemptRow[]>;
  /**
   * Marks the hook's last refused request as ingested as this call, as an ingest does
   * (docs/reference.md#refused-requests), so purge can be tested on both kinds of refused receipt without going through
   * the intake.
   */
  ingested(hook: string, callId: string): Promise<void>;
  /** A count of the deliveries of these sinks by sink and state, made by reading every row (GROUP BY). */
  deliveryCounts(sinks: readonly string[]): Promise<CountRow[]>;
}
export type CountRow = { sink: string; state: string; count: number };
export type ReceiptRow = {
  outcome: string;
  status: number;
  callId: string | null;
  rawBody: Uint8Array | null;
  ingestedAs: string | null;
};
export type DeliveryRow = { sink: string; state: string; attempts: number };
export type AttemptRow = { attempt: number; outcome: string; httpStatus: number | null };

export function storeContract(name: string, open: () => Promise<Store>, peek: StorePeek): void {
  describe(`${name} store contract`, () => {
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

    /** Commits one call with a delivery to a fresh sink, and returns that sink's name. */
    async function oneDelivery(store: Store): Promise<string> {
      const sink = unique('sink');
      await store.commitCall(commitInput(unique('hook'), 'call_id:1', [sink]));
      return sink;
    }

    it('commits a call, then answers a duplicate with the first id and counts it', async () => {
      const hook = unique('hook');
      const first = await a.commitCall(commitInput(hook, 'call_id:c1', ['log', 'jsonl']));
      const again = await a.commitCall(commitInput(hook, 'call_id:c1', ['log', 'jsonl']));
      expect(first.outcome).toBe('accepted');
      expect(again).toEqual({ outcome: 'duplicate', id: first.id });
      expect((await a.getCall(first.id))?.duplicates).toBe(1);
      const deliveries = await peek.deliveries(first.id);
      expect(deliveries.map((d) => d.sink).sort()).toEqual(['jsonl', 'log']);
      expect(deliveries.every((d) => d.state === 'pending' && d.attempts === 0)).toBe(true);
      const receipts = await peek.receipts(hook);
      expect(receipts.map((r) => [r.outcome, r.status, r.callId])).toEqual([
        ['accepted', 200, first.id],
        ['duplicate', 200, first.id],
      ]);
    });

    it("keeps a duplicate's body and query on its receipt, and leaves them off the stored call's own", async () => {
      const hook = unique('hook');
      const body = new TextEncoder().encode('{"call_id":"c1"}');
      const first = await a.commitCall({
        ...commitInput(hook, 'call_id:c1', []),
        receipt: { ...commitInput(hook, 'x', []).receipt, rawBody: body, query: '?a=1' },
      });
      const again = await b.commitCall({
        ...commitInput(hook, 'call_id:c1', []),
        receipt: { ...commitInput(hook, 'x', []).receipt, rawBody: body, query: '?a=2' },
      });
      expect(again).toEqual({ outcome: 'duplicate', id: first.id });
      const receipts = await peek.receipts(hook);
      expect(receipts.map((r) => [r.outcome, r.rawBody && Buffer.from(r.rawBody).toString()])).toEqual([
        ['accepted', null],
        ['duplicate', '{"call_id":"c1"}'],
      ]);
    });

    it('answers a conflict for the same key with other content, writing nothing, unless the hook counts it as a duplicate', async () => {
      const hook = unique('hook');
      const first = await a.commitCall(
        commitInput(hook, 'order_id:ORD-1', ['log'], Date.now(), { call_outcome: 'order placed' }),
      );
      const other = commitInput(hook, 'order_id:ORD-1', ['log'], Date.now(), { call_outcome: 'order cancelled' });
      expect(await b.commitCall(other)).toEqual({ outcome: 'conflict', id: first.id });
      expect((await a.getCall(first.id))?.duplicates).toBe(0);
      expect(await a.getCall(other.record.id)).toBeUndefined();
      expect((await peek.receipts(hook)).map((r) => r.outcome)).toEqual(['accepted']);

      const counted = {
        ...commitInput(hook, 'order_id:ORD-1', ['log'], Date.now(), { call_outcome: 'order cancelled' }),
        onConflict: 'duplicate' as const,
      };
      expect(await b.commitCall(counted)).toEqual({ outcome: 'duplicate', id: first.id });
      expect((await a.getCall(first.id))?.duplicates).toBe(1);
      // The content a repeat is compared with is the first call's: a repeat of the first is still a duplicate.
      expect(
        await a.commitCall(commitInput(hook, 'order_id:ORD-1', [], Date.now(), { call_outcome: 'order placed' })),
      ).toEqual({ outcome: 'duplicate', id: first.id });
    });

    it('never takes a call with no dedup key for a duplicate', async () => {
      const hook = unique('hook');
      const results = await Promise.all([a, b, a].map((store) => store.commitCall(commitInput(hook, null, ['log']))));
      expect(results.map((r) => r.outcome)).toEqual(['accepted', 'accepted', 'accepted']);
      expect(new Set(results.map((r) => r.id)).size).toBe(3);
      const stored = await a.listCalls({ hook });
      expect(stored.map((c) => c.record.dedup_key)).toEqual([null, null, null]);
      for (const { id } of results) expect((await peek.deliveries(id)).map((d) => d.sink)).toEqual(['log']);
    });

    it('keeps one record and one delivery per sink for 50 concurrent commits from two instances', async () => {
      const hook = unique('hook');
      const inputs = Array.from({ length: 50 }, () => commitInput(hook, 'order_id:ORD-1', ['log', 'jsonl']));
      const results = await Promise.all(inputs.map((input, i) => (i % 2 ? a : b).commitCall(input)));
      const accepted = results.filter((r) => r.outcome === 'accepted');
      expect(accepted).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(49);
      const id = accepted[0]!.id;
      expect(new Set(results.map((r) => r.id))).toEqual(new Set([id]));
      expect(await a.listCalls({ hook })).toHaveLength(1);
      expect((await b.getCall(id))?.duplicates).toBe(49);
      expect((await peek.deliveries(id)).map((d) => d.sink).sort()).toEqual(['jsonl', 'log']);
      expect(await peek.receipts(hook)).toHaveLength(50);
    });

    it('rolls the whole commit back when any part fails', async () => {
      const hook = unique('hook');
      // Two outbox rows for one sink break UNIQUE (call_id, sink) after the call row is written.
      const broken = commitInput(hook, 'call_id:x', ['log', 'log']);
      await expect(a.commitCall(broken)).rejects.toThrow();
      expect(await a.getCall(broken.record.id)).toBeUndefined();
      expect(await peek.receipts(hook)).toEqual([]);
      expect((await a.commitCall(commitInput(hook, 'call_id:x', ['log']))).outcome).toBe('accepted');
    });

    it('stores a held call with no deliveries, and reads record and raw back as written', async () => {
      const hook = unique('hook');
      const input = { ...commitInput(hook, 'call_id:h', []), status: 'held' as const };
      // JSON.parse gives an own "__proto__" key, as a sender's body would; NUL is legal in a JSON string.
      input.record.extra = JSON.parse('{"__proto__":"x","constructor":{"a":1},"nul":"a\\u0000b","emoji":"😀"}');
      input.record.problems = [
        { field: 'call_outcome', code: 'missing_required', message: 'call_outcome is required' },
      ];
      const { outcome, id } = await a.commitCall(input);
      expect(outcome).toBe('held');
      const stored = await a.getCall(id);
      expect(stored?.status).toBe('held');
      expect(JSON.stringify(stored?.record)).toBe(JSON.stringify(input.record));
      expect(stored?.raw).toEqual(input.raw);
      expect(await peek.deliveries(id)).toEqual([]);
      expect(await a.getCall(newId())).toBeUndefined();
    });

    it('lists calls of a hook in id order, after a cursor', async () => {
      const hook = unique('hook');
      const start = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await a.commitCall(commitInput(hook, `call_id:${i}`, [], start + i))).id);
      await a.commitCall(commitInput(unique('hook'), 'call_id:0', [], start + 1));
      const page = await a.listCalls({ hook, limit: 2 });
      expect(page.map((c) => c.record.id)).toEqual(ids.slice(0, 2));
      expect((await a.listCalls({ hook, after: ids[1] })).map((c) => c.record.id)).toEqual(ids.slice(2));
      expect(await a.listCalls({ hook, after: ids[2] })).toEqual([]);
      expect((await a.listCalls({ after: ids[0], limit: 1000 })).some((c) => c.record.id === ids[0])).toBe(false);
    });

    it('moves a delivery through ok, retry and dead, recording each attempt', async () => {
      const sink = unique('sink');
      const hook = unique('hook');
      await a.commitCall(commitInput(hook, 'call_id:1', [sink]));
      await a.commitCall(commitInput(hook, 'call_id:2', [sink]));
      const claimed = await a.claimDeliveries(sink, 10, 60_000);
      expect(claimed.map((d) => [d.sink, d.attempt])).toEqual([
        [sink, 1],
        [sink, 1],
      ]);
      expect(claimed.map((d) => d.record.dedup_key)).toEqual(['call_id:1', 'call_id:2']);
      const [done, retried] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
      expect(await a.claimDeliveries(sink, 10, 60_000)).toEqual([]);

      expect(await a.finishAttempt(done.id, 1, attemptOk)).toBe(true);
      expect(
        await a.finishAttempt(
          retried.id,
          1,
          { ...attemptOk, outcome: 'retry', httpStatus: 503, error: 'HTTP 503' },
          Date.now() + 300,
        ),
      ).toBe(true);
      expect((await peek.deliveries(done.record.id))[0]?.state).toBe('done');
      expect((await peek.deliveries(retried.record.id))[0]?.state).toBe('pending');
      expect(await b.claimDeliveries(sink, 10, 60_000)).toEqual([]);
      const dueIn = await a.nextDueIn(sink);
      expect(dueIn).toBeGreaterThan(100);
      expect(dueIn).toBeLessThanOrEqual(300);

      await sleep(350);
      const second = await a.claimDeliveries(sink, 10, 60_000);
      expect(second.map((d) => [d.id, d.attempt])).toEqual([[retried.id, 2]]);
      expect(
        await a.finishAttempt(retried.id, 2, { ...attemptOk, outcome: 'dead', httpStatus: 400, error: 'HTTP 400' }),
      ).toBe(true);
      expect((await peek.deliveries(retried.record.id))[0]).toMatchObject({ state: 'dead', attempts: 2 });
      expect(await a.nextDueIn(sink)).toBeUndefined();
      expect(await peek.attempts(retried.id)).toEqual([
        { attempt: 1, outcome: 'retry', httpStatus: 503 },
        { attempt: 2, outcome: 'dead', httpStatus: 400 },
      ]);
      expect(await peek.attempts(done.id)).toEqual([{ attempt: 1, outcome: 'ok', httpStatus: 200 }]);
    });

    it('never leases one delivery to two instances claiming at once', async () => {
      const sink = unique('sink');
      const hook = unique('hook');
      for (let i = 0; i < 40; i++) await a.commitCall(commitInput(hook, `call_id:${i}`, [sink]));
      const seen: number[] = [];
      const drain = async (store: Store) => {
        for (;;) {
          const batch = await store.claimDeliveries(sink, 3, 60_000);
          if (batch.length === 0) return;
          seen.push(...batch.map((d) => d.id));
        }
      };
      await Promise.all([drain(a), drain(b), drain(a), drain(b)]);
      expect(seen).toHaveLength(40);
      expect(new Set(seen).size).toBe(40);
    });

    it('claims a delivery again once its lease has expired, as attempt 2', async () => {
      const sink = await oneDelivery(a);
      const [first] = await a.claimDeliveries(sink, 1, 400);
      expect(first?.attempt).toBe(1);
      expect(await b.claimDeliveries(sink, 1, 400)).toEqual([]);
      expect(await b.nextDueIn(sink)).toBeLessThanOrEqual(400);
      await sleep(450);
      const [again] = await b.claimDeliveries(sink, 1, 60_000);
      expect(again).toMatchObject({ id: first?.id, attempt: 2 });

      // The first worker finishes late: whatever it says is dropped, its attempt row included.
      const { id, record } = first!;
      expect(await a.finishAttempt(id, 1, attemptOk)).toBe(false);
      expect(await peek.attempts(id)).toEqual([]);
      expect(await peek.deliveries(record.id)).toEqual([{ sink, state: 'in_flight', attempts: 2 }]);
      const retry = { ...attemptOk, outcome: 'retry' as const, httpStatus: 503 };
      expect(await b.finishAttempt(id, 2, retry, Date.now() + 60_000)).toBe(true);
      // Once finished, the same attempt number is not in flight any more: a second report changes nothing.
      expect(await b.finishAttempt(id, 2, attemptOk)).toBe(false);
      expect(await peek.deliveries(record.id)).toEqual([{ sink, state: 'pending', attempts: 2 }]);
      expect(await peek.attempts(id)).toEqual([{ attempt: 2, outcome: 'retry', httpStatus: 503 }]);
    });

    it('releases leases back to pending without counting an attempt', async () => {
      const sink = await oneDelivery(a);
      const [first] = await a.claimDeliveries(sink, 1, 60_000);
      await a.releaseLeases([first!.id]);
      await a.releaseLeases([]);
      const [again] = await a.claimDeliveries(sink, 1, 60_000);
      expect(again).toMatchObject({ id: first!.id, attempt: 1 });
    });

    it('counts deliveries by state', async () => {
      const before = await a.countDeliveries();
      const sink = await oneDelivery(a);
      await oneDelivery(a);
      const [claimed] = await a.claimDeliveries(sink, 1, 60_000);
      const after = await a.countDeliveries();
      expect(after.pending - before.pending).toBe(1);
      expect(after.in_flight - before.in_flight).toBe(1);
      await a.finishAttempt(claimed!.id, claimed!.attempt, attemptOk);
      const done = await a.countDeliveries();
      expect(done.done - before.done).toBe(1);
      expect(Object.keys(done).sort()).toEqual(['dead', 'done', 'in_flight', 'pending']);
    });

    it('keeps its counts of deliveries by sink and state equal to a count of the rows through every kind of change (docs/reference.md#metrics, /metrics)', async () => {
      const hook = unique('hook');
      const [s1, s2, s3] = [unique('sink'), unique('sink'), unique('sink')];
      const steps: string[] = [];
      /** The figures /metrics reads, for these sinks, against a count of every row, after each step. */
      const expectCounts = async (step: string) => {
        steps.push(step);
        const byName = (x: CountRow, y: CountRow) => (x.sink + x.state < y.sink + y.state ? -1 : 1);
        const kept = (await a.deliveryStats())
          .filter((s) => [s1, s2, s3].includes(s.sink))
          .map(({ sink, state, count }) => ({ sink, state, count }));
        expect(kept.sort(byName), step).toEqual(
          (await peek.deliveryCounts([s1, s2, s3])).filter((r) => r.count > 0).sort(byName),
        );
      };

      // Intake from two instances; a held call then released to both sinks.
      for (let i = 0; i < 6; i++) await (i % 2 ? b : a).commitCall(commitInput(hook, `call_id:n${i}`, [s1, s2]));
      const held = (await a.commitCall({ ...commitInput(hook, 'call_id:held', []), status: 'held' })).id;
      expect(await a.release(held, [s1, s2])).toBe(true);
      await expectCounts('committed and released');

      // The worker: claims, then an attempt of each outcome; leases let go.
      const claimed = await a.claimDeliveries(s1, 5, 60_000);
      expect(claimed).toHaveLength(5);
      await a.finishAttempt(claimed[0]!.id, claimed[0]!.attempt, attemptOk);
      await b.finishAttempt(
        claimed[1]!.id,
        claimed[1]!.attempt,
        { ...attemptOk, outcome: 'retry', httpStatus: 503 },
        Date.now() + 60_000,
      );
      await a.finishAttempt(claimed[2]!.id, claimed[2]!.attempt, { ...attemptOk, outcome: 'dead', httpStatus: 400 });
      await a.finishAttempt(claimed[3]!.id, claimed[3]!.attempt, { ...attemptOk, outcome: 'dead', httpStatus: 400 });
      const [leased] = await b.claimDeliveries(s2, 1, 60_000);
      await b.releaseLeases([claimed[4]!.id, leased!.id]);
      await expectCounts('claimed, finished and released');

      // The admin: dead ones retried, a delivered call redelivered.
      expect(await a.retryDeliveries({ state: 'dead', sink: s1 })).toBe(2);
      expect(await a.redeliver(claimed[0]!.record.id, [s1, s3])).toBe(2);
      await expectCounts('retried and redelivered');

      // Purge: an old call delivered everywhere goes, and its deliveries with it (ON DELETE CASCADE).
      const old = await a.commitCall(commitInput(hook, 'call_id:old', [s3], Date.parse('1990-03-01T00:00:00Z')));
      for (const c of await a.claimDeliveries(s3, 5, 60_000)) await a.finishAttempt(c.id, c.attempt, attemptOk);
      await expectCounts('old call delivered');
      expect(await a.purge(new Date('1990-04-01T00:00:00Z'))).toEqual({ calls: 1, receipts: 1 });
      expect(await peek.deliveries(old.id)).toEqual([]);
      await expectCounts('purged');
      expect(steps).toHaveLength(5);
    });

    it('keeps the raw bytes of a rejected request', async () => {
      const hook = unique('hook');
      const rawBody = new Uint8Array([0x7b, 0x22, 0xff, 0x00, 0xfe]);
      await a.recordRejection({
        hook,
        receivedAt: new Date().toISOString(),
        method: 'POST',
        contentType: 'application/json',
        size: rawBody.length,
        status: 400,
        outcome: 'rejected',
        error: 'invalid UTF-8',
        rawBody: rawBody.subarray(1),
      });
      const [receipt] = await peek.receipts(hook);
      expect(receipt).toMatchObject({ outcome: 'rejected', status: 400, callId: null });
      expect([...receipt!.rawBody!]).toEqual([0x22, 0xff, 0x00, 0xfe]);
    });

    it('purges calls and receipts older than a date, keeping calls still owed to a sink', async () => {
      const hook = unique('hook');
      const longAgo = Date.parse('2001-03-01T00:00:00Z');
      const delivered = await a.commitCall(commitInput(hook, 'call_id:old-done', ['s'], longAgo));
      const owed = await a.commitCall(commitInput(hook, 'call_id:old-owed', ['s'], longAgo));
      const recent = await a.commitCall(commitInput(hook, 'call_id:recent', [], Date.parse('2001-06-01T00:00:00Z')));
      const [first] = await a.claimDeliveries('s', 1, 60_000);
      await a.finishAttempt(first!.id, first!.attempt, attemptOk);
      expect(first!.record.id).toBe(delivered.id);

      expect(await a.purge(new Date('2001-04-01T00:00:00Z'))).toEqual({ calls: 1, receipts: 1 });
      expect(await a.getCall(delivered.id)).toBeUndefined();
      expect(await peek.deliveries(delivered.id)).toEqual([]);
      expect(await a.getCall(owed.id)).toBeDefined();
      expect(await a.getCall(recent.id)).toBeDefined();
      // The call still owed keeps its receipt: it is part of the call's history.
      expect((await peek.receipts(hook)).map((r) => r.callId)).toEqual([owed.id, recent.id]);
    });

    it('purges exactly what is no longer owed: never a held call, a call with a delivery not done, their receipts, nor a refused request not yet ingested', async () => {
      const hook = unique('hook');
      const sink = unique('sink');
      // An era of its own: the purges below delete everything old enough in the shared database, and no other test
      // writes before 2001.
      const old = Date.parse('1995-03-01T00:00:00Z');
      const cutoff = new Date('1995-04-01T00:00:00Z');
      let n = 0;
      // A second apart, in this order, so ids, receipts and the claim below follow the order written here.
      const commit = async (
        name: string,
        sinks: string[],
        status: 'accepted' | 'held' = 'accepted',
        at = old + 1000 * n++,
      ) => (await a.commitCall({ ...commitInput(hook, `call_id:${name}`, sinks, at), status })).id;
      const refuse = (outcome: 'rejected' | 'in-call', at: number) =>
        a.recordRejection({
          hook,
          receivedAt: new Date(at).toISOString(),
          method: 'POST',
          contentType: 'application/json',
          size: 2,
          status: outcome === 'rejected' ? 400 : 200,
          outcome,
          rawBody: new Uint8Array([0x7b, 0x7d]),
        });

      const done = await commit('done', [sink]);
      const dead = await commit('dead', [sink]);
      const inFlight = await commit('in-flight', [sink]);
      const pending = await commit('pending', [sink]);
      const held = await commit('held', [], 'held');
      const nothingOwed = await commit('no-sinks', []);
      const young = await commit('young', [], 'accepted', cutoff.getTime() + 60_000);
      // Repeats: a duplicate's receipt belongs to the call it repeats, and goes or stays with it.
      expect((await a.commitCall(commitInput(hook, 'call_id:done', [sink], old + 1000 * n++))).outcome).toBe(
        'duplicate',
      );
      expect((await a.commitCall(commitInput(hook, 'call_id:held', [], old + 1000 * n++))).outcome).toBe('duplicate');
      await refuse('rejected', old + 1000 * n++);
      await refuse('in-call', old + 1000 * n++);
      await refuse('rejected', cutoff.getTime() + 60_000);
      // Refused requests ingested since: one as a call that goes, one as a call that stays, whose history it is.
      await refuse('rejected', old + 1000 * n++);
      await peek.ingested(hook, nothingOwed);
      await refuse('rejected', old + 1000 * n++);
      await peek.ingested(hook, held);

      const claimed = await a.claimDeliveries(sink, 3, 60_000);
      expect(claimed.map((c) => c.record.id)).toEqual([done, dead, inFlight]);
      await a.finishAttempt(claimed[0]!.id, claimed[0]!.attempt, attemptOk);
      await a.finishAttempt(claimed[1]!.id, claimed[1]!.attempt, { ...attemptOk, outcome: 'dead', httpStatus: 400 });

      // The dry run's count is what the purge then deletes, and counting deletes nothing.
      const counted = await a.purgeable(cutoff);
      expect(counted).toEqual({ calls: 2, receipts: 5 });
      expect(await a.purgeable(cutoff)).toEqual(counted);
      expect(await a.purge(cutoff)).toEqual(counted);
      expect(await a.purgeable(cutoff)).toEqual({ calls: 0, receipts: 0 });

      const names = new Map(
        Object.entries({ done, dead, inFlight, pending, held, nothingOwed, young }).map(([name, id]) => [id, name]),
      );
      const name = (id: string | null) => (id === null ? '' : ` ${names.get(id)}`);
      /** Each receipt left of this test's, oldest first: its outcome, its call, and the call it was ingested as. */
      const receipts = async () =>
        (await peek.receipts(hook)).map(
          (r) => `${r.outcome}${name(r.callId)}${r.ingestedAs === null ? '' : ` ingested as${name(r.ingestedAs)}`}`,
        );
      const kept = async () =>
        (await Promise.all([done, dead, inFlight, pending, held, nothingOwed, young].map((id) => a.getCall(id)))).map(
          (c) => c?.record.dedup_key ?? 'purged',
        );
      expect(await kept()).toEqual([
        'purged',
        'call_id:dead',
        'call_id:in-flight',
        'call_id:pending',
        'call_id:held',
        'purged',
        'call_id:young',
      ]);
      expect(await peek.deliveries(done)).toEqual([]);
      expect((await peek.deliveries(dead)).map((d) => d.state)).toEqual(['dead']);
      // What stays, in the order written: the receipts of the calls kept (the held call's duplicate too), the old
      // refused request not yet ingested, the young one, and the one ingested as the held call. Gone: the receipts of
      // the two calls purged (the done call's duplicate too), the in-call lookup's, the one ingested as a call purged.
      expect(await receipts()).toEqual([
        'accepted dead',
        'accepted inFlight',
        'accepted pending',
        'held held',
        'accepted young',
        'duplicate held',
        'rejected',
        'rejected',
        'rejected ingested as held',
      ]);

      // --include-refused takes the old refused request not yet ingested too, and nothing else.
      expect(await a.purgeable(cutoff, { includeRefused: true })).toEqual({ calls: 0, receipts: 1 });
      expect(await a.purge(cutoff, { includeRefused: true })).toEqual({ calls: 0, receipts: 1 });
      expect(await receipts()).toEqual([
        'accepted dead',
        'accepted inFlight',
        'accepted pending',
        'held held',
        'accepted young',
        'duplicate held',
        'rejected',
        'rejected ingested as held',
      ]);
      expect(await kept()).toEqual([
        'purged',
        'call_id:dead',
        'call_id:in-flight',
        'call_id:pending',
        'call_id:held',
        'purged',
        'call_id:young',
      ]);
    });

    it('purges test traffic by source whatever its age, held or owed, never while in flight, and never a real call', async () => {
      const hook = unique('hook');
      const sink = unique('sink');
      // An era of its own for the purge with a cutoff; without one, every test call of the store goes, and no test
      // before this one stores any.
      const old = Date.parse('1996-03-01T00:00:00Z');
      const cutoff = new Date('1996-04-01T00:00:00Z');
      let n = 0;
      const commit = async (
        name: string,
        source: RecordSource,
        sinks: string[],
        status: 'accepted' | 'held' = 'accepted',
        at = old + 1000 * n++,
      ) => {
        const input = { ...commitInput(hook, `call_id:${name}`, sinks, at), status };
        input.record.source = source;
        return (await a.commitCall(input)).id;
      };
      const ids = {
        done: await commit('done', 'replay', [sink]),
        dead: await commit('dead', 'simulate', [sink]),
        inFlight: await commit('in-flight', 'replay', [sink]),
        pending: await commit('pending', 'simulate', [sink]),
        held: await commit('held', 'replay', [], 'held'),
        young: await commit('young', 'simulate', [], 'accepted', Date.now()),
        webhook: await commit('webhook', 'webhook', []),
        reconcile: await commit('reconcile', 'reconcile', []),
        recovered: await commit('recovered', 'recovered', [], 'held'),
      };
      // A duplicate's receipt is the test call's too, and goes with it.
      const repeat = { ...commitInput(hook, 'call_id:done', [sink], old + 1000 * n++) };
      repeat.record.source = 'replay';
      expect((await a.commitCall(repeat)).outcome).toBe('duplicate');
      await a.recordRejection({
        hook,
        receivedAt: new Date(old + 1000 * n++).toISOString(),
        method: 'POST',
        contentType: 'application/json',
        size: 1,
        status: 400,
        outcome: 'rejected',
        rawBody: new Uint8Array([0x7b]),
      });
      const claimed = await a.claimDeliveries(sink, 3, 60_000);
      expect(claimed.map((c) => c.record.id)).toEqual([ids.done, ids.dead, ids.inFlight]);
      await a.finishAttempt(claimed[0]!.id, claimed[0]!.attempt, attemptOk);
      await a.finishAttempt(claimed[1]!.id, claimed[1]!.attempt, { ...attemptOk, outcome: 'dead', httpStatus: 400 });

      const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
      const kept = async () =>
        (await Promise.all(Object.values(ids).map((id) => a.getCall(id)))).flatMap((c) =>
          c ? [names.get(c.record.id)] : [],
        );
      const receipts = async () =>
        (await peek.receipts(hook)).map((r) => `${r.outcome}${r.callId === null ? '' : ` ${names.get(r.callId)}`}`);
      const sources = ['replay', 'simulate'] as const;

      // With a cutoff too, both apply: the old test calls that no worker is sending, and nothing else.
      const counted = await a.purgeable(cutoff, { sources });
      expect(counted).toEqual({ calls: 4, receipts: 5 });
      expect(await a.purge(cutoff, { sources })).toEqual(counted);
      expect(await kept()).toEqual(['inFlight', 'young', 'webhook', 'reconcile', 'recovered']);
      expect(await receipts()).toEqual([
        'accepted inFlight',
        'accepted young',
        'accepted webhook',
        'accepted reconcile',
        'held recovered',
        'rejected',
      ]);
      for (const id of [ids.done, ids.dead, ids.pending]) expect(await peek.deliveries(id)).toEqual([]);

      // Without one, whatever their age; the call in flight stays until its attempt ends, then goes too.
      const young = await a.purgeable(null, { sources: ['simulate'] });
      expect(young.calls).toBeGreaterThanOrEqual(1);
      expect(await a.purge(null, { sources: ['simulate'] })).toEqual(young);
      expect(await kept()).toEqual(['inFlight', 'webhook', 'reconcile', 'recovered']);
      await a.purge(null, { sources });
      expect(await kept()).toEqual(['inFlight', 'webhook', 'reconcile', 'recovered']);
      await a.finishAttempt(claimed[2]!.id, claimed[2]!.attempt, attemptOk);
      await a.purge(null, { sources });
      expect(await a.purgeable(null, { sources })).toEqual({ calls: 0, receipts: 0 });
      expect(await kept()).toEqual(['webhook', 'reconcile', 'recovered']);
      expect(await receipts()).toEqual(['accepted webhook', 'accepted reconcile', 'held recovered', 'rejected']);

      // A real call is never purged by source, and a purge with neither a cutoff nor a source is no purge.
      const real = ['webhook'] as unknown as typeof sources;
      await expect(a.purge(null, { sources: real })).rejects.toThrow(/test traffic only, not "webhook"/);
      await expect(a.purgeable(null, { sources: real })).rejects.toThrow(/test traffic only/);
      await expect(a.purge(null)).rejects.toThrow(/a purge needs a cutoff/);
      await expect(a.purge(null, { sources, includeRefused: true })).rejects.toThrow(/has no source/);
      expect(await kept()).toEqual(['webhook', 'reconcile', 'recovered']);
    });

    it('keeps the last reconcile run, each run in place of the one before, for every connection to read', async () => {
      expect(await b.lastReconcileRun()).toBeUndefined();
      const first: ReconcileRun = {
        startedAt: '2026-11-26T10:00:00.000Z',
        finishedAt: '2026-11-26T10:00:04.500Z',
        trigger: 'cli',
        since: '2026-11-01',
        dryRun: true,
        campaigns: 3,
        calls: 12,
        stored: 2,
        alreadyReceived: 10,
        deferred: 0,
        errors: 0,
        error: null,
      };
      await a.recordReconcileRun(first);
      expect(await b.lastReconcileRun()).toEqual(first);
      // A failed run is kept too, with its error as given (masked by the caller); text a store may not hold as is,
      // a NUL, comes back as it went in.
      const failed: ReconcileRun = {
        ...first,
        startedAt: '2026-11-26T11:00:00.000Z',
        finishedAt: '2026-11-26T11:00:01.000Z',
        trigger: 'serve',
        since: null,
        dryRun: false,
        campaigns: 1,
        calls: 0,
        stored: 0,
        alreadyReceived: 0,
        deferred: 1,
        errors: 1,
        error: 'the calling service answered 502 Bad Gateway \u0000 "quoted" <b>',
      };
      await b.recordReconcileRun(failed);
      expect(await a.lastReconcileRun()).toEqual(failed);
    });

    it('pings with a write', async () => {
      await expect(a.ping()).resolves.toBeUndefined();
      await expect(b.ping()).resolves.toBeUndefined();
    });

    it('opens twice at once on a migrated database', async () => {
      const [x, y] = await Promise.all([open(), open()]);
      try {
        const { id } = await x.commitCall(commitInput(unique('hook'), 'call_id:1', []));
        expect((await y.getCall(id))?.record.id).toBe(id);
      } finally {
        await Promise.all([x.close(), y.close()]);
      }
    });
  });
}

/** Stored records callhook never writes (a row edited or imported by hand): migration 4 must not trip on them. */
export const ODD_RECORDS: [key: string, text: string][] = [
  ['odd:null', 'null'],
  ['odd:array', '[1, 2]'],
  ['odd:spaced', '{ "data": { "a": 1 } }\n'],
  ['odd:empty', '{}'],
];

/** The insert of the version before migration 4, as a replica still running it during a rolling upgrade sends it. */
export const OLD_INSERT_COLUMNS = 'id, hook, dedup_key, status, source, received_at, record, raw';

/**
 * What a store made before migration 4 keeps of a call `c1` of hook `h` stored under `order_id:ORD-1`, and of the
 * ODD_RECORDS under their keys: every record, now read with revision 1, and every key, against which a repeat of
 * the content is still a duplicate and other content a conflict; a call with no key can now be stored; and a
 * replica of the version before (`insertAsBefore`) still commits beside it, its calls deduplicated as any other.
 */
export async function expectKeptByMigration4(
  store: Store,
  record: { data: Record<string, Scalar>; extra: Record<string, unknown> },
  insertAsBefore: (id: string, dedupKey: string, record: string) => Promise<void>,
): Promise<void> {
  expect(JSON.stringify((await store.getCall('c1'))?.record)).toBe(JSON.stringify({ ...record, revision: 1 }));
  const repeat = (key: string) => ({
    ...commitInput('h', key, [], Date.now(), record.data),
    contentHash: contentHash(record.data, record.extra),
  });
  expect(await store.commitCall(repeat('order_id:ORD-1'))).toEqual({ outcome: 'duplicate', id: 'c1' });
  expect(
    await store.commitCall(commitInput('h', 'order_id:ORD-1', [], Date.now(), { call_outcome: 'order cancelled' })),
  ).toEqual({ outcome: 'conflict', id: 'c1' });
  expect((await store.commitCall(commitInput('h', null, []))).outcome).toBe('accepted');
  for (const [key] of ODD_RECORDS) {
    expect((await store.commitCall(commitInput('h', key, [], Date.now(), { call_outcome: 'x' }))).outcome, key).toBe(
      'conflict',
    );
  }
  await insertAsBefore('c2', 'order_id:ORD-2', JSON.stringify({ ...record, id: 'c2', dedup_key: 'order_id:ORD-2' }));
  expect(await store.commitCall(repeat('order_id:ORD-2'))).toEqual({ outcome: 'duplicate', id: 'c2' });
  expect((await store.getCall('c2'))?.duplicates).toBe(1);
}
