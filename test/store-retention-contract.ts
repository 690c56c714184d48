import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { AUDIT_CHUNK, removedText, retentionPass } from '../src/privacy/retention.js';
import { DEFAULT_RETENTION } from '../src/privacy/retention-config.js';
import type { CallRecord } from '../src/record.js';
import type { CommitInput } from '../src/store/calls.js';
import { SETTLE_MS } from '../src/store/retention.js';
import type { Store } from '../src/store/store.js';
import { commitInput, unique } from './helpers/store-inputs.js';

/**
 * What every Store does for the retention (docs/reference.md#retention), run against each implementation on a store
 * of its own for each test (`open` makes a new one): raw requests dropped, receipts' bodies dropped and refused
 * requests deleted, a field removed from every place a call keeps it, the audit log aged out, each only from what is
 * older than the cutoff, each pass taking what arrived since the last.
 */
export function storeRetentionContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} store retention contract`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store?.close();
    });

    const HOUR = 3_600_000;
    const hook = 'end-of-call';
    /** A pass now, whose cutoff is an hour ago. */
    const pass = () => ({ before: new Date(Date.now() - HOUR), now: new Date() });

    /** A call received `ago` ms before now, with a recording URL in its data, extra, body and query. */
    function call(ago: number, overrides: Partial<CommitInput> = {}): CommitInput {
      const url = `https://rec.example/${unique('r')}.mp3`;
      const input = commitInput(hook, `recording_url:${url}`, [], Date.now() - ago, {
        first_name: 'Asha',
        recording_url: url,
      });
      input.record.extra = { recording_url: url, note: 'kept' };
      const body = JSON.stringify({ first_name: 'Asha', recording_url: url, note: 'kept' });
      return {
        ...input,
        raw: { method: 'POST', content_type: 'application/json', query: { recording_url: url, k: 'v' }, body },
        receipt: {
          ...input.receipt,
          rawBody: Buffer.from(body),
          query: `?recording_url=${encodeURIComponent(url)}&k=v`,
        },
        ...overrides,
      };
    }
    const commit = async (input: CommitInput) => (await store.commitCall(input)).id;
    const rawOf = async (id: string) => (await store.getCall(id))!.raw;

    it('drops the raw requests of old calls, keeping method and content type, once, and not the young ones', async () => {
      const old = await commit(call(2 * HOUR));
      const young = await commit(call(0));
      const { before, now } = pass();
      expect(await store.dropRawRequests(before, { now })).toBe(1);
      expect(await rawOf(old)).toEqual({
        method: 'POST',
        content_type: 'application/json',
        query: {},
        body: '',
        retention: { dropped: now.toISOString() },
      });
      expect((await rawOf(young)).body).toContain('recording_url');
      expect(await store.dropRawRequests(before, { now })).toBe(0);

      // Committed after the pass with an older received time (a refused request ingested, a call reconcile found):
      // a pass finds it by its id once it is sure to be committed, however old it says it is.
      const late = await commit(call(3 * HOUR));
      expect(await store.dropRawRequests(before, { now: new Date() })).toBe(0);
      // An id's first 48 bits are when it was made (ids.ts), which other tests in this process may have moved ahead.
      const made = Number.parseInt(late.replaceAll('-', '').slice(0, 12), 16);
      expect(await store.dropRawRequests(before, { now: new Date(made + SETTLE_MS + 1000) })).toBe(1);
      expect((await rawOf(late)).retention?.dropped).toBeDefined();
    });

    it("removes a field from an old call's data, extra, problems, edits, raw request and receipts, and nothing else", async () => {
      const input = call(2 * HOUR);
      input.record.problems = [
        { field: 'recording_url', code: 'invalid_format', message: 'recording_url "x" is not a URL', value: 'x' },
      ];
      const id = await commit(input);
      // A duplicate keeps its body on its receipt.
      expect((await store.commitCall(input)).outcome).toBe('duplicate');
      const url = input.record.data.recording_url as string;
      const edited: CallRecord = { ...input.record, revision: 2, data: { ...input.record.data, first_name: 'Asha K' } };
      const at = new Date().toISOString();
      const entry = {
        at,
        revision: 2,
        fields: { first_name: { before: 'Asha', after: 'Asha K' }, recording_url: { before: url } },
      };
      expect(await store.editCall(id, entry, edited)).toBe('edited');
      const young = await commit(call(0));

      const { before, now } = pass();
      expect(await store.removeField('recording_url', before, { now })).toBe(1);
      const stored = (await store.getCall(id))!;
      expect(stored.record.data).toEqual({ first_name: 'Asha K' });
      expect(stored.record.extra).toEqual({ note: 'kept' });
      expect(stored.record.problems).toEqual([
        {
          field: 'recording_url',
          code: 'invalid_format',
          message: 'recording_url: its value was removed by retention',
        },
      ]);
      expect(stored.record.dedup_key).toBe(`retention:${id}`);
      expect(stored.raw).toEqual({
        method: 'POST',
        content_type: 'application/json',
        query: { k: 'v' },
        body: '{"first_name":"Asha","note":"kept"}',
        retention: { fields: ['recording_url'] },
      });
      expect(await store.listEdits(id)).toEqual([
        {
          at,
          revision: 2,
          fields: { first_name: { before: 'Asha', after: 'Asha K' }, recording_url: { removed: 'retention' } },
        },
      ]);
      const receipts = await store.listReceipts(id);
      const duplicate = receipts.find((r) => r.outcome === 'duplicate')!;
      expect(Buffer.from(duplicate.rawBody!).toString()).toBe('{"first_name":"Asha","note":"kept"}');
      expect(duplicate.query).toBe('?k=v');
      expect(JSON.stringify(await store.getCall(id))).not.toContain(url);
      expect(JSON.stringify(receipts)).not.toContain(encodeURIComponent(url));

      expect((await store.getCall(young))!.record.data.recording_url).toBeDefined();
      // The call still has its dedup key's new value: a repeat of it is a new call now.
      expect((await store.commitCall({ ...input, record: { ...input.record, id: newId() } })).outcome).toBe('accepted');
      expect(await store.removeField('recording_url', before, { now })).toBe(0);
    });

    it('drops old receipts bodies, deletes old refused requests never ingested, and keeps the young', async () => {
      const refusal = (ago: number) => ({
        hook,
        receivedAt: new Date(Date.now() - ago).toISOString(),
        method: 'POST',
        contentType: 'application/json',
        size: 20,
        status: 400,
        outcome: 'rejected' as const,
        error: 'broken JSON',
        rawBody: Buffer.from('{"phone_number":"+9'),
        query: '?a=1',
      });
      await store.recordRejection(refusal(3 * HOUR));
      await store.recordRejection(refusal(3 * HOUR));
      const [toIngest] = await store.listReceiptPage({ outcome: 'rejected', limit: 10, order: 'asc' });
      const ingested = await commit({ ...call(3 * HOUR), ingests: toIngest!.id });
      const input = call(2 * HOUR);
      const id = await commit(input);
      await store.commitCall(input); // a duplicate, its body on its receipt
      await store.recordRejection(refusal(0));

      const { before, now } = pass();
      expect(await store.dropReceipts(before, { now })).toEqual({ bodies: 2, refused: 1 });
      const refused = await store.listReceiptPage({ outcome: 'rejected', limit: 10, order: 'asc' });
      expect(refused.map((r) => [r.ingestedAs, r.rawBody === null, r.query])).toEqual([
        [ingested, true, null],
        [null, false, '?a=1'],
      ]);
      const duplicate = (await store.listReceipts(id)).find((r) => r.outcome === 'duplicate')!;
      expect([duplicate.rawBody, duplicate.query]).toEqual([null, null]);
      // The call's own raw request is another matter (dropRawRequests).
      expect((await rawOf(id)).body).not.toBe('');
      expect(await store.dropReceipts(before, { now })).toEqual({ bodies: 0, refused: 0 });
    });

    it('stops between two chunks when its signal says so, and the next pass does what it left', async () => {
      const ids = await Promise.all(Array.from({ length: 5 }, () => commit(call(2 * HOUR))));
      const { before, now } = pass();
      const signal = AbortSignal.abort();
      expect(await store.dropRawRequests(before, { now, signal })).toBe(0);
      expect(await store.removeField('recording_url', before, { now, signal })).toBe(0);
      expect(await store.dropReceipts(before, { now, signal })).toEqual({ bodies: 0, refused: 0 });
      expect(await store.purge(before, { signal })).toEqual({ calls: 0, receipts: 0 });
      expect(await store.dropRawRequests(before, { now })).toBe(ids.length);
      expect(await store.purge(before)).toEqual({ calls: ids.length, receipts: ids.length });
    });

    it('ages out the audit entries older than retention.audit, more than one chunk of them, and keeps the newer', async () => {
      const now = new Date();
      const entry = (ago: number, i: number) => ({
        at: new Date(now.getTime() - ago).toISOString(),
        actor: `priya-${i}@example.in`,
        address: '203.0.113.7',
        action: 'call.edit',
        target: newId(),
        outcome: 'ok',
        details: { fields: ['call_summary'] },
      });
      const old = AUDIT_CHUNK + 100;
      await store.appendAudit(Array.from({ length: old }, (_, i) => entry(2 * HOUR + i, i)));
      await store.appendAudit([entry(HOUR - 60_000, old), entry(0, old + 1)]);
      const config = { ...DEFAULT_RETENTION, audit: HOUR };

      const counts = await retentionPass(config, { store }, { now });
      expect(counts.audit).toBe(old);
      expect(removedText(counts)).toBe(`${old} audit log entries deleted`);
      expect((await store.listAudit({ limit: 1000 })).map((e) => e.actor)).toEqual([
        `priya-${old + 1}@example.in`,
        `priya-${old}@example.in`,
      ]);
      // The next pass finds nothing more to do until an entry ages past the cutoff.
      expect((await retentionPass(config, { store }, { now })).audit).toBe(0);
      const later = new Date(now.getTime() + 2 * 60_000);
      expect((await retentionPass(config, { store }, { now: later })).audit).toBe(1);
      expect((await store.listAudit({})).map((e) => e.actor)).toEqual([`priya-${old + 1}@example.in`]);
    });

    it('empties the log of what was removed', async () => {
      await commit(call(2 * HOUR));
      const { before, now } = pass();
      await store.dropRawRequests(before, { now });
      expect(await store.truncateLog()).toBe(true);
    });
  });
}
