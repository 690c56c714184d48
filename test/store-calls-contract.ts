import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../src/normalize/dedup-key.js';
import type { RecordSource, Scalar } from '../src/record.js';
import type { ListCallsQuery } from '../src/store/admin-queries.js';
import type { CallStatus } from '../src/store/calls.js';
import type { Store } from '../src/store/store.js';
import { commitData, commitInput, unique } from './helpers/store-inputs.js';

/** How every Store lists calls for /admin and the CLI (docs/reference.md#operating): each filter alone and combined. */
export function storeCallsContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store listCalls filters`, () => {
    let a: Store;
    afterAll(async () => {
      await a?.close();
    });

    const call = (hook: string, data: Record<string, Scalar>, at: string, status?: CallStatus) =>
      commitData(a, hook, data, at, status);
    const ids = async (query: ListCallsQuery) => (await a.listCalls(query)).map((c) => c.record.id);

    const hook = unique('hook');
    const token = unique('tok');
    let r: string[] = [];
    // In a year no other test writes in, so a date range without a hook finds exactly these calls.
    beforeAll(async () => {
      a = await open();
      r = [
        await call(
          hook,
          {
            call_outcome: ' Completed ',
            sentiment_analysis: 'Positive',
            phone_number: '+14155550100',
            summary: `Élodie's invoice ${token}`,
          },
          '2087-03-01T10:00:00.000Z',
        ),
        await call(
          hook,
          {
            call_outcome: 'voicemail',
            sentiment_analysis: 'NEGATIVE',
            phone_number: '+14155550101',
            recording_url: 'https://rec.example/a.mp3',
            summary: 'left a message',
          },
          '2087-03-01T23:59:59.999Z',
          'held',
        ),
        await call(
          hook,
          {
            call_outcome: 'COMPLETED',
            sentiment_analysis: 'negative',
            phone_number: '+14155550100',
            summary: 'ÉLODIE called back',
          },
          '2087-03-02T00:00:00.000Z',
        ),
        await call(
          hook,
          {
            call_outcome: 'completed',
            sentiment_analysis: 'neutral',
            phone_number: '+442071838750',
            summary: 'order 77',
          },
          '2087-03-05T12:00:00.000Z',
          'held',
        ),
        // PostgreSQL's json operators refuse a record holding U+0000: one such record must not fail the filters.
        await call(hook, { call_outcome: 'x\u0000y', sentiment_analysis: 'positive' }, '2087-03-06T00:00:00.000Z'),
      ];
      await call(
        unique('hook'),
        { call_outcome: 'completed', phone_number: '+14155550100', recording_url: 'https://rec.example/a.mp3' },
        '2088-01-01T00:00:00.000Z',
      );
    });

    it('filters by status', async () => {
      expect(await ids({ hook, status: 'held' })).toEqual([r[1], r[3]]);
      expect(await ids({ hook, status: 'accepted' })).toEqual([r[0], r[2], r[4]]);
    });

    it('filters by outcome, ignoring case and surrounding spaces', async () => {
      expect(await ids({ hook, outcome: 'completed' })).toEqual([r[0], r[2], r[3]]);
      expect(await ids({ hook, outcome: '  COMPLETED\t' })).toEqual([r[0], r[2], r[3]]);
      expect(await ids({ hook, outcome: 'complete' })).toEqual([]);
    });

    it('filters by sentiment, ignoring case', async () => {
      expect(await ids({ hook, sentiment: 'negative' })).toEqual([r[1], r[2]]);
      expect(await ids({ hook, sentiment: 'POSITIVE' })).toEqual([r[0], r[4]]);
    });

    it('lists newest first with order desc, its cursor going backwards', async () => {
      expect(await ids({ hook, order: 'desc' })).toEqual([...r].reverse());
      expect(await ids({ hook, order: 'desc', limit: 2 })).toEqual([r[4], r[3]]);
      expect(await ids({ hook, order: 'desc', after: r[3] })).toEqual([r[2], r[1], r[0]]);
      expect(await ids({ hook, order: 'asc', after: r[3] })).toEqual([r[4]]);
    });

    it('filters by source', async () => {
      const other = unique('hook');
      const recovered = await a.commitCall(
        (() => {
          const input = commitInput(other, null, []);
          input.record.source = 'recovered';
          return input;
        })(),
      );
      await commitData(a, other, { first_name: 'x' }, new Date().toISOString());
      expect(await ids({ hook: other, source: 'recovered' })).toEqual([recovered.id]);
      expect(await ids({ hook, source: 'webhook' })).toEqual(r);
      expect(await ids({ hook, source: 'simulate' })).toEqual([]);
      // Several: any of them, as `callhook calls list --source a,b` asks.
      expect(await ids({ hook: other, source: ['recovered', 'webhook'] })).toHaveLength(2);
      expect(await ids({ hook: other, source: ['replay', 'recovered'] })).toEqual([recovered.id]);
      expect(await ids({ hook: other, source: ['webhook'] })).not.toContain(recovered.id);
      expect(await ids({ hook: other, source: [] })).toEqual([]);
    });

    it('filters by the platform that sent the call, none being the calling service (docs/reference.md#other-voice-platforms)', async () => {
      const other = unique('hook');
      const sentBy = async (platform: string | undefined) => {
        const input = commitInput(other, `call_id:${unique('c')}`, []);
        if (platform !== undefined) input.record.platform = platform;
        return (await a.commitCall(input)).id;
      };
      const first = await sentBy('vapi');
      const service = await sentBy(undefined);
      const second = await sentBy('retell');
      const third = await sentBy('vapi');
      expect(await ids({ hook: other, platform: 'vapi' })).toEqual([first, third]);
      expect(await ids({ hook: other, platform: 'retell' })).toEqual([second]);
      expect(await ids({ hook: other, platform: 'none' })).toEqual([service]);
      expect(await ids({ hook: other, platform: 'bland' })).toEqual([]);
      expect(await ids({ hook: other, platform: 'vapi', order: 'desc', limit: 1 })).toEqual([third]);
      // The calls of the other tests name no platform: all of them are the calling service's.
      expect(await ids({ hook, platform: 'none' })).toEqual(r);
    });

    it('leaves test traffic out when asked, and out of the review queue always; a receipt says its source (docs/reference.md#test-traffic)', async () => {
      const other = unique('hook');
      const start = Date.now() - 60_000;
      const problem = { field: 'call_outcome', code: 'missing_required' as const, message: 'missing' };
      const commit = (source: RecordSource, i: number, status: CallStatus = 'accepted') => {
        const input = { ...commitInput(other, `call_id:${unique('c')}`, [], start + i), status };
        input.record.source = source;
        input.record.problems = [problem];
        input.receipt.source = source;
        return input;
      };
      // Together, as a burst arrives: PostgreSQL commits them in one statement (postgres/batch.ts).
      const sources: RecordSource[] = ['webhook', 'replay', 'simulate', 'reconcile', 'recovered', 'replay'];
      const made = await Promise.all(
        sources.map((source, i) => a.commitCall(commit(source, i, i % 2 ? 'held' : 'accepted'))),
      );
      const [webhook, replay, simulate, reconcile, recovered, replayHeld] = made.map((m) => m.id);
      expect(await ids({ hook: other })).toEqual(made.map((m) => m.id));
      expect(await ids({ hook: other, hideTest: true })).toEqual([webhook, reconcile, recovered]);
      expect(await ids({ hook: other, hideTest: true, order: 'desc', limit: 2 })).toEqual([recovered, reconcile]);
      expect(await ids({ hook: other, hideTest: false })).toHaveLength(6);
      expect(await ids({ hook: other, source: 'replay' })).toEqual([replay, replayHeld]);
      expect(await ids({ hook: other, source: 'replay', hideTest: true })).toEqual([]);
      // Every one has problems, some are held: the queue holds only what is not test traffic.
      expect(await ids({ hook: other, review: true })).toEqual([webhook, reconcile, recovered]);
      expect(await ids({ hook: other, review: true, source: 'simulate' })).toEqual([]);
      expect(simulate).toBeDefined();

      // A repeat is a request of its own: a replay of a real call leaves a test receipt on that call.
      const again = commit('replay', 0);
      again.record.dedup_key = (await a.getCall(webhook!))!.record.dedup_key;
      again.record.data = (await a.getCall(webhook!))!.record.data;
      again.contentHash = contentHash(again.record.data, again.record.extra);
      expect(await a.commitCall(again)).toEqual({ outcome: 'duplicate', id: webhook });
      await a.recordRejection({ ...again.receipt, status: 400, outcome: 'rejected', error: 'bad body' });
      await a.recordRejection({ ...again.receipt, source: 'webhook', status: 415, outcome: 'rejected' });
      await a.recordRejection({ ...again.receipt, source: undefined, status: 413, outcome: 'rejected' });
      const receipts = async (hideTest?: boolean) =>
        (await a.listReceiptPage({ hook: other, hideTest, limit: 50 })).map((r) => `${r.outcome} ${r.status}`).sort();
      expect(await receipts()).toHaveLength(10);
      // The webhook's, reconcile's and recovered calls', a refused request of the sender's, and one from before
      // receipts kept their source.
      expect(await receipts(true)).toEqual([
        'accepted 200',
        'accepted 200',
        'held 200',
        'rejected 413',
        'rejected 415',
      ]);
    });

    it('filters by phone number, exactly', async () => {
      expect(await ids({ hook, phone: '+14155550100' })).toEqual([r[0], r[2]]);
      expect(await ids({ hook, phone: '14155550100' })).toEqual([]);
    });

    it("gives a caller's history by phone, newest first, with the count of all", async () => {
      const other = (await a.listCalls({ phone: '+14155550100', from: '2088-01-01', to: '2088-01-02' }))[0]!.record.id;
      const all = await a.callerHistory('+14155550100', 10);
      expect(all.records.map((r) => r.id).slice(0, 3)).toEqual([other, r[2], r[0]]);
      expect(all.count).toBe(all.records.length);
      const newest = await a.callerHistory('+14155550100', 1);
      expect(newest).toEqual({ count: all.count, records: [all.records[0]] });
      expect(await a.callerHistory('+14155550199', 5)).toEqual({ count: 0, records: [] });
      // A held call is still the caller's call: what they said is known, only its delivery waits.
      const held = await a.callerHistory('+14155550101', 5);
      expect(held.records.map((record) => record.id)).toContain(r[1]);
      expect(held.count).toBe(held.records.length);
    });

    it('filters by recording URL, exactly', async () => {
      expect(await ids({ hook, recordingUrl: 'https://rec.example/a.mp3' })).toEqual([r[1]]);
      expect(
        await ids({ recordingUrl: 'https://rec.example/a.mp3', from: '2087-01-01', to: '2089-01-01' }),
      ).toHaveLength(2);
      expect(await ids({ hook, recordingUrl: 'https://rec.example/A.mp3' })).toEqual([]);
    });

    it('filters by received_at within [from, to), as dates or timestamps', async () => {
      expect(await ids({ from: '2087-03-01', to: '2087-03-06' })).toEqual(r.slice(0, 4));
      expect(await ids({ hook, from: '2087-03-01', to: '2087-03-02' })).toEqual([r[0], r[1]]);
      expect(await ids({ hook, from: '2087-03-02T00:00:00.000Z' })).toEqual([r[2], r[3], r[4]]);
      expect(await ids({ hook, from: '2087-03-02T01:00:00+01:00', to: '2087-03-05T12:00Z' })).toEqual([r[2]]);
      expect(await ids({ hook, to: '2087-03-01T23:59:59.999Z' })).toEqual([r[0]]);
      expect(await ids({ hook, from: '2087-03-01T10:00:00.001Z', to: '2087-03-05T12:00:00' })).toEqual([r[1], r[2]]);
      await expect(a.listCalls({ from: 'yesterday' })).rejects.toThrow(/"from"/);
      await expect(a.listCalls({ to: '2087-02-30' })).rejects.toThrow(/"to"/);
    });

    it('searches the record text ignoring case, across hooks', async () => {
      expect(await ids({ text: token.toUpperCase() })).toEqual([r[0]]);
      expect(await ids({ hook, text: 'élodie' })).toEqual([r[0], r[2]]);
      expect(await ids({ hook, text: 'ORDER 7' })).toEqual([r[3]]);
      expect(await ids({ hook, text: '50%' })).toEqual([]);
    });

    it('combines filters, and pages through them with the cursor', async () => {
      expect(await ids({ hook, outcome: 'Completed', sentiment: 'NEGATIVE', phone: '+14155550100' })).toEqual([r[2]]);
      expect(await ids({ hook, status: 'accepted', from: '2087-03-01', to: '2087-03-03', text: 'élodie' })).toEqual([
        r[0],
        r[2],
      ]);
      expect(await ids({ phone: '+14155550100', from: '2087-01-01', to: '2089-01-01', status: 'held' })).toEqual([]);
      expect(await ids({ hook, outcome: 'completed', limit: 2 })).toEqual([r[0], r[2]]);
      expect(await ids({ hook, outcome: 'completed', limit: 2, after: r[2] })).toEqual([r[3]]);
      expect(await ids({ hook, outcome: 'completed', after: r[3] })).toEqual([]);
      const full = (await a.listCalls({ hook, status: 'held', limit: 1 }))[0];
      expect(full).toMatchObject({ status: 'held', duplicates: 0, record: { id: r[1], hook } });
    });
  });
}
