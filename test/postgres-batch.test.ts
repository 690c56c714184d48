import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { contentHash } from '../src/normalize/dedup-key.js';
import type { CommitInput, CommitResult } from '../src/store/calls.js';
import { createCommitBatcher, MAX_BATCH } from '../src/store/postgres/batch.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import type { Store } from '../src/store/store.js';
import { serviceUrl } from './helpers/services.js';
import { commitInput, unique } from './helpers/store-inputs.js';

/**
 * Group commit on PostgreSQL (src/store/postgres/batch.ts): the calls of one turn of the event loop, committed
 * together, come out exactly as they would one after the other. Every call below is handed over in one turn
 * (`Promise.all` over calls made synchronously), so each test's calls form one batch.
 */

const url = serviceUrl('postgres');

describe.skipIf(!url)('postgres group commit', () => {
  let admin: pg.Client;
  let schema: string;
  let store: Store;
  let pool: pg.Pool;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });
  beforeEach(async () => {
    schema = `callhook_batch_${randomBytes(6).toString('hex')}`;
    store = await openPostgresStore({ url: url!, schema, poolSize: 4 });
    pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 2 });
  });
  afterEach(async () => {
    await store.close();
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  /**
   * A batcher on its own pool whose calls alone are the store's own commit, so a test can tell which calls the
   * batch's statement took and which it left to be committed alone.
   */
  const spiedBatcher = () => {
    const alone = vi.fn((input: CommitInput): Promise<CommitResult> => store.commitCall(input));
    return {
      commit: createCommitBatcher(pool, alone),
      alone: () => alone.mock.calls.map(([input]) => input.record.id),
    };
  };

  const count = async (sql: string, values: unknown[] = []) =>
    (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".${sql}`, values)).rows[0]!.n;

  it('commits many calls of one turn each exactly once, with their outbox rows and receipts, none alone', async () => {
    const hook = unique('hook');
    const { commit, alone } = spiedBatcher();
    const inputs = Array.from({ length: MAX_BATCH + 50 }, (_, i) =>
      commitInput(hook, `call_id:${i}`, ['log', 'jsonl']),
    );
    const results = await Promise.all(inputs.map(commit));
    expect(results).toEqual(inputs.map((input) => ({ outcome: 'accepted', id: input.record.id })));
    expect(alone()).toEqual([]);
    expect(await count('calls WHERE hook = $1', [hook])).toBe(inputs.length);
    const { rows: keys } = await admin.query(
      `SELECT count(DISTINCT dedup_key)::int AS n FROM "${schema}".calls WHERE hook = $1`,
      [hook],
    );
    expect(keys[0].n).toBe(inputs.length);
    expect(await count(`deliveries WHERE state = 'pending' AND attempts = 0`)).toBe(inputs.length * 2);
    const { rows } = await admin.query(
      `SELECT r.call_id, r.outcome, r.status, r.raw_body, r.query, r.method, r.size FROM "${schema}".receipts r WHERE r.hook = $1 ORDER BY r.call_id`,
      [hook],
    );
    // Ids sort by arrival (UUIDv7), so the calls' order too.
    expect(rows).toEqual(
      inputs.map((input) => ({
        call_id: input.record.id,
        outcome: 'accepted',
        status: 200,
        raw_body: null,
        query: null,
        method: 'POST',
        size: 21,
      })),
    );
    // The stored record and raw request read back as they were given.
    const stored = await store.getCall(inputs[7]!.record.id);
    expect(stored).toMatchObject({ record: inputs[7]!.record, raw: inputs[7]!.raw, status: 'accepted', duplicates: 0 });
    // The counts /metrics reads follow the statement's outbox rows (migration 5's triggers).
    expect((await store.deliveryStats()).map(({ sink, state, count }) => [sink, state, count])).toEqual([
      ['jsonl', 'pending', inputs.length],
      ['log', 'pending', inputs.length],
    ]);
  });

  it('makes two calls of one key in one batch a record and its duplicate, in the order they came', async () => {
    const hook = unique('hook');
    const { commit, alone } = spiedBatcher();
    const body = new TextEncoder().encode('{"call_id":"c1"}');
    const first = commitInput(hook, 'call_id:c1', ['log']);
    const repeat = {
      ...commitInput(hook, 'call_id:c1', ['log']),
      receipt: { ...first.receipt, rawBody: body, query: '?again=1' },
    };
    const other = commitInput(hook, 'call_id:c2', ['log']);
    const results = await Promise.all([first, repeat, other].map(commit));
    expect(results).toEqual([
      { outcome: 'accepted', id: first.record.id },
      { outcome: 'duplicate', id: first.record.id },
      { outcome: 'accepted', id: other.record.id },
    ]);
    // The repeat is counted by the batch's second statement, not alone.
    expect(alone()).toEqual([]);
    expect((await store.getCall(first.record.id))?.duplicates).toBe(1);
    expect(await store.getCall(repeat.record.id)).toBeUndefined();
    expect(await count('deliveries WHERE call_id = $1', [first.record.id])).toBe(1);
    const receipts = await store.listReceipts(first.record.id);
    expect(receipts.map((r) => [r.outcome, r.rawBody && Buffer.from(r.rawBody).toString(), r.query])).toEqual([
      ['accepted', null, null],
      ['duplicate', '{"call_id":"c1"}', '?again=1'],
    ]);
  });

  it('keeps each record and raw request of a batch as given, a \\u0000 and key order included', async () => {
    const hook = unique('hook');
    const odd = commitInput(hook, 'call_id:odd', []);
    odd.record.extra = { zeta: 'a\u0000b', alpha: '"quoted" \\ é' };
    odd.raw = { ...odd.raw, body: '{"zeta":"a\\u0000b"}' };
    const plain = commitInput(hook, 'call_id:plain', []);
    await Promise.all([odd, plain].map((input) => store.commitCall(input)));
    const stored = await store.getCall(odd.record.id);
    expect(stored?.record).toEqual(odd.record);
    expect(Object.keys(stored!.record.extra)).toEqual(['zeta', 'alpha']);
    expect(stored?.raw).toEqual(odd.raw);
    expect((await store.getCall(plain.record.id))?.record).toEqual(plain.record);
  });

  it('never takes calls without a key for repeats of each other', async () => {
    const hook = unique('hook');
    const inputs = [commitInput(hook, null, []), commitInput(hook, null, [])];
    const results = await Promise.all(inputs.map((input) => store.commitCall(input)));
    expect(results).toEqual(inputs.map((input) => ({ outcome: 'accepted', id: input.record.id })));
  });

  it('answers a conflict with a stored call in a batch as a call alone does, and commits the rest', async () => {
    const hook = unique('hook');
    const stored = commitInput(hook, 'order_id:ORD-1', ['log']);
    expect(await store.commitCall(stored)).toEqual({ outcome: 'accepted', id: stored.record.id });
    const { commit, alone } = spiedBatcher();
    const changed = { first_name: 'Asha', call_duration: 200 };
    const other = (onConflict: CommitInput['onConflict']) => {
      const input = commitInput(hook, 'order_id:ORD-1', ['log'], Date.now(), changed);
      return { ...input, contentHash: contentHash(input.record.data, input.record.extra), onConflict };
    };
    const kept = other('keep');
    const counted = other('duplicate');
    const same = commitInput(hook, 'order_id:ORD-1', ['log']);
    const fresh = commitInput(hook, 'order_id:ORD-2', ['log']);
    const results = await Promise.all([kept, fresh, counted, same].map(commit));
    expect(results).toEqual([
      { outcome: 'conflict', id: stored.record.id },
      { outcome: 'accepted', id: fresh.record.id },
      { outcome: 'duplicate', id: stored.record.id },
      { outcome: 'duplicate', id: stored.record.id },
    ]);
    // All three are settled by the batch's second statement, none alone.
    expect(alone()).toEqual([]);
    // The conflict wrote nothing; the two duplicates are counted on the stored call, each with its receipt.
    expect((await store.getCall(stored.record.id))?.duplicates).toBe(2);
    expect((await store.listReceipts(stored.record.id)).map((r) => r.outcome)).toEqual([
      'accepted',
      'duplicate',
      'duplicate',
    ]);
    expect(await count('calls WHERE hook = $1', [hook])).toBe(2);
    expect(await count('deliveries')).toBe(2);
  });

  it('counts many copies of each call from two replicas at once, each a duplicate of one record, none alone', async () => {
    const hook = unique('hook');
    const a = spiedBatcher();
    const b = spiedBatcher();
    const calls = Array.from({ length: 40 }, (_, i) => commitInput(hook, `call_id:${i}`, ['log']));
    // Five copies of each, as five requests of their own: each has its own record id and receipt.
    const copies = calls.flatMap((call) =>
      Array.from({ length: 5 }, (_, k) => ({ ...call, record: { ...call.record, id: `${call.record.id}-${k}` } })),
    );
    const results = await Promise.all(copies.map((input, i) => (i % 2 === 0 ? a : b).commit(input)));
    expect(a.alone()).toEqual([]);
    expect(b.alone()).toEqual([]);
    const ids = new Set(results.map((r) => r.id));
    expect(ids.size).toBe(calls.length);
    expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(calls.length);
    expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(calls.length * 4);
    expect(await count('calls WHERE hook = $1', [hook])).toBe(calls.length);
    const { rows } = await admin.query(`SELECT sum(duplicates)::int AS n FROM "${schema}".calls WHERE hook = $1`, [
      hook,
    ]);
    expect(rows[0].n).toBe(calls.length * 4);
    expect(await count(`receipts WHERE hook = $1 AND outcome = 'duplicate'`, [hook])).toBe(calls.length * 4);
    expect(await count('deliveries')).toBe(calls.length);
  });

  it('leaves a repeat of a call stored before content hashes were kept to be committed alone', async () => {
    const hook = unique('hook');
    const stored = commitInput(hook, 'call_id:old', ['log']);
    await store.commitCall(stored);
    await admin.query(`UPDATE "${schema}".calls SET content_hash = NULL WHERE id = $1`, [stored.record.id]);
    const { commit, alone } = spiedBatcher();
    const repeat = commitInput(hook, 'call_id:old', ['log']);
    expect(await commit(repeat)).toEqual({ outcome: 'duplicate', id: stored.record.id });
    expect(alone()).toEqual([repeat.record.id]);
    expect((await store.getCall(stored.record.id))?.duplicates).toBe(1);
  });

  it('fails an ingest of a receipt that is no refused request alone, and commits the rest of its batch', async () => {
    const hook = unique('hook');
    const inputs = Array.from({ length: 5 }, (_, i) => commitInput(hook, `call_id:${i}`, ['log']));
    const failing = { ...inputs[2]!, ingests: 987_654_321 };
    const outcomes = await Promise.allSettled(
      inputs.map((input) => store.commitCall(input === inputs[2] ? failing : input)),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({
      message: 'receipt 987654321 is not a refused request waiting to be ingested',
    });
    expect(await store.getCall(failing.record.id)).toBeUndefined();
    expect(await count('calls WHERE hook = $1', [hook])).toBe(4);
    expect(await count('deliveries')).toBe(4);
    expect(await count('receipts WHERE hook = $1', [hook])).toBe(4);
  });

  it('marks the refused request a call of a batch ingests, and gives it no receipt of its own', async () => {
    const hook = unique('hook');
    await store.recordRejection({
      hook,
      receivedAt: new Date().toISOString(),
      method: 'POST',
      contentType: 'application/json',
      size: 2,
      status: 400,
      outcome: 'rejected',
      rawBody: new Uint8Array([0x7b, 0x7d]),
    });
    const [refused] = await store.listReceiptPage({ hook, outcome: 'rejected' });
    const ingest = { ...commitInput(hook, 'call_id:late', ['log']), ingests: refused!.id };
    const beside = commitInput(hook, 'call_id:beside', ['log']);
    expect(await Promise.all([ingest, beside].map((input) => store.commitCall(input)))).toEqual([
      { outcome: 'accepted', id: ingest.record.id },
      { outcome: 'accepted', id: beside.record.id },
    ]);
    expect(await store.getReceipt(refused!.id)).toMatchObject({
      callId: ingest.record.id,
      ingestedAs: ingest.record.id,
      outcome: 'rejected',
    });
    expect(await count('receipts WHERE hook = $1', [hook])).toBe(2);
  });

  it('tries each call of a statement PostgreSQL refused alone, so only the one at fault fails', async () => {
    const hook = unique('hook');
    const { commit, alone } = spiedBatcher();
    const inputs = Array.from({ length: 4 }, (_, i) => commitInput(hook, `call_id:${i}`, ['log']));
    // A time no timestamptz column takes: the batch's statement fails as a whole, and so does this call alone.
    const bad = { ...inputs[1]!, record: { ...inputs[1]!.record, received_at: 'not a date' } };
    const outcomes = await Promise.allSettled([inputs[0]!, bad, inputs[2]!, inputs[3]!].map(commit));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(pg.DatabaseError);
    expect(alone()).toEqual(inputs.map((input) => input.record.id));
    expect(await count('calls WHERE hook = $1', [hook])).toBe(3);
    expect(await count('receipts WHERE hook = $1', [hook])).toBe(3);
  });

  it('counts repeats of the same calls at two replicas at once, in opposite orders, without a deadlock', async () => {
    const other = await openPostgresStore({ url: url!, schema, poolSize: 4 });
    // PostgreSQL breaks a deadlock after deadlock_timeout (1 s): the statements would still come out right, each call
    // then counted alone, so the error itself is what is watched for.
    const deadlocks: string[] = [];
    const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args) {
      const result = query.apply(this, args);
      if (result instanceof Promise)
        result.catch((err: { code?: string; message?: string }) => {
          if (err?.code === '40P01') deadlocks.push(String(err.message));
        });
      return result as never;
    });
    try {
      const hook = unique('hook');
      const keys = Array.from({ length: MAX_BATCH }, (_, i) => `call_id:${i}`);
      await Promise.all(keys.map((key) => store.commitCall(commitInput(hook, key, ['log']))));
      // Sets of other sizes each round: the order a statement updates its calls in is not the order it was given them
      // (PostgreSQL groups them by hash), and two sets of different sizes come out in different orders.
      const sizes = [MAX_BATCH, 37, 180, 73, 211, 5, 149, 97, 241, 13, 120, 61, 199, 29, 167, 83];
      let copies = 0;
      for (const [round, size] of sizes.entries()) {
        const theirs = keys.filter((_, i) => (i * 7 + round) % MAX_BATCH < size).reverse();
        const results = await Promise.all([
          ...keys.map((key) => store.commitCall(commitInput(hook, key, ['log']))),
          ...theirs.map((key) => other.commitCall(commitInput(hook, key, ['log']))),
        ]);
        expect(results.filter((r) => r.outcome !== 'duplicate')).toEqual([]);
        copies += results.length;
      }
      expect(deadlocks).toEqual([]);
      // Every copy is counted on its call, once.
      const { rows } = await pool.query<{ n: string }>('SELECT sum(duplicates) AS n FROM calls WHERE hook = $1', [
        hook,
      ]);
      expect(Number(rows[0]!.n)).toBe(copies);
    } finally {
      spy.mockRestore();
      await other.close();
    }
  });

  it('stores each call once when replicas commit the same keys at once, in opposite orders', async () => {
    const other = await openPostgresStore({ url: url!, schema, poolSize: 4 });
    try {
      const hook = unique('hook');
      const keys = Array.from({ length: 100 }, (_, i) => `call_id:${i}`);
      const [mine, theirs] = await Promise.all([
        Promise.all(keys.map((key) => store.commitCall(commitInput(hook, key, ['log'])))),
        Promise.all([...keys].reverse().map((key) => other.commitCall(commitInput(hook, key, ['log'])))),
      ]);
      theirs.reverse();
      for (const [i, result] of mine.entries()) {
        // One of the two is the record, the other its duplicate, whichever came first.
        expect([result.outcome, theirs[i]!.outcome].sort()).toEqual(['accepted', 'duplicate']);
        expect(result.id).toBe(theirs[i]!.id);
      }
      expect(await count('calls WHERE hook = $1', [hook])).toBe(keys.length);
      expect(await count('deliveries')).toBe(keys.length);
      expect(await count(`receipts WHERE hook = $1 AND outcome = 'duplicate'`, [hook])).toBe(keys.length);
    } finally {
      await other.close();
    }
  });
});
