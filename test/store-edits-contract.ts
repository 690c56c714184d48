import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import type { CallRecord } from '../src/record.js';
import type { CallEdit } from '../src/store/admin-queries.js';
import type { Store } from '../src/store/store.js';
import { commitInput, unique } from './helpers/store-inputs.js';

/**
 * Editing a call (docs/reference.md#editing-a-call) as every Store keeps it: the edit and the record's new revision in
 * one transaction, never one lost to another edit; the history and review marks kept with the call; the review queue;
 * and what a repeat is compared with left as first received (docs/reference.md#deduplication). Run against each
 * implementation.
 */

/** What the Store interface does not reach, done straight on the implementation's tables. */
export interface EditsPeek {
  /** Empties the call's content hash, as a call stored before migration 4 (or by a replica of that version) has it. */
  forgetContentHash(callId: string): Promise<void>;
}

const at = () => new Date().toISOString();

/** The record with data changed as an edit would, one revision on, and the entry that goes with it. */
function edited(
  record: CallRecord,
  data: CallRecord['data'],
  problems = record.problems,
): { record: CallRecord; entry: CallEdit } {
  const next = { ...record, data: { ...record.data, ...data }, problems, revision: record.revision + 1 };
  const fields = Object.fromEntries(
    Object.entries(data).map(([field, after]) => [field, { before: record.data[field], after }]),
  );
  return { record: next, entry: { at: at(), fields, revision: next.revision } };
}

export function storeEditsContract(name: string, open: () => Promise<Store>, peek: EditsPeek): void {
  describe(`${name} store edits contract`, () => {
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

    it('keeps an edit with the call and its record at the next revision, the raw request and status as they were', async () => {
      const hook = unique('hook');
      const input = { ...commitInput(hook, 'call_id:e1', []), status: 'held' as const };
      const { id } = await a.commitCall(input);
      const made = edited(input.record, { first_name: 'Asha Rao' });
      const { record } = made;
      // Who made it is kept with it (docs/reference.md#operators), and given back.
      const entry: CallEdit = { ...made.entry, by: 'priya@example.in' };
      expect(await a.editCall(id, entry, record)).toBe('edited');

      const stored = await b.getCall(id);
      expect(stored?.record).toEqual({
        ...input.record,
        revision: 2,
        data: { first_name: 'Asha Rao', call_duration: 184 },
      });
      expect(stored?.raw).toEqual(input.raw);
      expect(stored?.status).toBe('held');
      expect(await b.listEdits(id)).toEqual([entry]);
      expect((await b.listEdits(id))[0]?.by).toBe('priya@example.in');
      expect(await b.listEdits(newId())).toEqual([]);

      // Made from revision 1 again: the record has moved on, and nothing is written.
      const late = edited(input.record, { first_name: 'Asha R.' });
      expect(await b.editCall(id, late.entry, late.record)).toBe('stale');
      expect((await a.getCall(id))?.record.data.first_name).toBe('Asha Rao');
      expect(await a.listEdits(id)).toHaveLength(1);
      expect(await a.editCall(newId(), late.entry, late.record)).toBe('missing');
    });

    it('compares a repeat with the content as first received, also after an edit, and for a call stored before its hash had a column', async () => {
      const hook = unique('hook');
      for (const [key, forget] of [
        ['call_id:r1', false],
        ['call_id:r2', true],
      ] as const) {
        const input = commitInput(hook, key, []);
        const { id } = await a.commitCall(input);
        if (forget) await peek.forgetContentHash(id);
        const { record, entry } = edited(input.record, { first_name: 'Someone else' });
        expect(await a.editCall(id, entry, record)).toBe('edited');
        // The repeat of the request as it came is a duplicate; the edited content is another call's (a conflict).
        expect(await b.commitCall(commitInput(hook, key, []))).toEqual({ outcome: 'duplicate', id });
        const asEdited = commitInput(hook, key, [], Date.now(), record.data);
        expect(await b.commitCall(asEdited), key).toEqual({ outcome: 'conflict', id });
      }
    });

    it('loses no edit when edits of one call race from two instances: each is made again from what it finds', async () => {
      const hook = unique('hook');
      const input = commitInput(hook, 'call_id:race', [], Date.now(), { call_duration: 0 });
      const { id } = await a.commitCall(input);
      /** Adds one to call_duration, made again from the stored record for as long as another edit came first. */
      const increment = async (store: Store) => {
        for (let tries = 0; tries < 100; tries++) {
          const { record } = (await store.getCall(id))!;
          const next = edited(record, { call_duration: Number(record.data.call_duration) + 1 });
          const outcome = await store.editCall(id, next.entry, next.record);
          if (outcome === 'edited') return tries;
          expect(outcome).toBe('stale');
        }
        throw new Error('an edit never got in');
      };
      const tries = await Promise.all(Array.from({ length: 12 }, (_, i) => increment(i % 2 ? a : b)));
      const stored = await a.getCall(id);
      expect(stored?.record).toMatchObject({ revision: 13, data: { call_duration: 12 } });
      const edits = await b.listEdits(id);
      expect(edits.map((e) => e.revision)).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
      expect(edits.map((e) => e.fields.call_duration)).toEqual(
        Array.from({ length: 12 }, (_, i) => ({ before: i, after: i + 1 })),
      );
      // They did race: at least one was refused as stale and made again.
      expect(tries.some((n) => n > 0)).toBe(true);
    });

    it('lists the review queue oldest first: held calls, and calls with problems not marked reviewed at their revision', async () => {
      const hook = unique('hook');
      const start = Date.now() - 60_000;
      const problem = {
        field: 'call_outcome',
        code: 'missing_required' as const,
        message: 'call_outcome is required but was missing or empty',
      };
      const commit = async (key: string, i: number, status: 'accepted' | 'held', problems: CallRecord['problems']) => {
        const input = { ...commitInput(hook, key, [], start + i), status };
        input.record.problems = problems;
        return { id: (await a.commitCall(input)).id, record: input.record };
      };
      const clean = await commit('call_id:clean', 0, 'accepted', []);
      const flawed = await commit('call_id:flawed', 1, 'accepted', [problem]);
      const held = await commit('call_id:held', 2, 'held', [problem]);
      const heldClean = await commit('call_id:held-clean', 3, 'held', []);
      const queue = async () => (await b.listCalls({ hook, review: true })).map((c) => c.record.id);
      expect(await queue()).toEqual([flawed.id, held.id, heldClean.id]);
      expect((await b.listCalls({ hook, review: false })).map((c) => c.record.id)).toEqual([
        clean.id,
        flawed.id,
        held.id,
        heldClean.id,
      ]);
      expect((await b.listCalls({ hook, review: true, order: 'desc', limit: 1 })).map((c) => c.record.id)).toEqual([
        heldClean.id,
      ]);

      // Marked reviewed at its revision, a call with problems leaves the queue; a held call stays until released.
      const mark = (revision: number): CallEdit => ({
        at: at(),
        fields: {},
        revision,
        reviewed: true,
        by: 'admin-token',
      });
      expect(await a.editCall(flawed.id, mark(1))).toBe('edited');
      expect(await a.editCall(held.id, mark(1))).toBe('edited');
      expect(await queue()).toEqual([held.id, heldClean.id]);
      expect(await a.release(held.id, [])).toBe(true);
      expect(await queue()).toEqual([heldClean.id]);

      // An edit makes a new revision, which nobody has reviewed yet: with problems still, it is back in the queue.
      const next = edited(flawed.record, { first_name: 'Asha Rao' });
      expect(await a.editCall(flawed.id, next.entry, next.record)).toBe('edited');
      expect(await queue()).toEqual([flawed.id, heldClean.id]);
      // A mark made at a revision the call has left is stale, and written nowhere.
      expect(await b.editCall(flawed.id, mark(1))).toBe('stale');
      expect(await a.editCall(flawed.id, mark(2))).toBe('edited');
      expect(await queue()).toEqual([heldClean.id]);
      expect((await a.listEdits(flawed.id)).map((e) => [e.revision, e.reviewed ?? false, e.by])).toEqual([
        [1, true, 'admin-token'],
        [2, false, undefined],
        [2, true, 'admin-token'],
      ]);
    });

    it('deletes the edits with the call when purge deletes it', async () => {
      const hook = unique('hook');
      // An era of its own: no other test writes before 1990.
      const input = commitInput(hook, 'call_id:old', [], Date.parse('1985-03-01T00:00:00Z'));
      const { id } = await a.commitCall(input);
      const { record, entry } = edited(input.record, { first_name: 'Old' });
      expect(await a.editCall(id, entry, record)).toBe('edited');
      expect(await a.purge(new Date('1985-04-01T00:00:00Z'))).toEqual({ calls: 1, receipts: 1 });
      expect(await a.getCall(id)).toBeUndefined();
      expect(await a.listEdits(id)).toEqual([]);
    });
  });
}
