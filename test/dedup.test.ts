import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../src/store/admin-queries.js';
import { storesUnderTest } from './helpers/database.js';
import { ADMIN, jsonlRecords, KEY, post, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * docs/reference.md#deduplication over real HTTP: a dedup rule never merges two different calls. What is kept is shown
 * for every rule that answers `duplicate`: the first call, the count on it, and the repeat's body on its receipt.
 */

type Reply = { status: string; id: string; dedup_key: string | null; conflicts_with?: string; problems?: unknown[] };

const admin = async <T>(server: TestServer, path: string): Promise<T> => {
  const res = await fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};
const send = async (server: TestServer, body: unknown, hook = 'end-of-call'): Promise<Reply> => {
  const res = await post(server.url, body, { hook });
  expect(res.status).toBe(200);
  return (await res.json()) as Reply;
};
type CallDetail = StoredCall & { receipts: { outcome: string; rawBody?: string }[] };

const stores = storesUnderTest(serviceUrl('postgres'), 'callhook_dedup');

describe.each(stores)('dedup on %s', (_, open) => {
  let server: TestServer;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    server = await startServer({
      env: opened.env,
      config: {
        hooks: {
          orders: { dedup: ['order_id'] },
          'one-per-order': { dedup: ['order_id'], on_conflict: 'duplicate' },
          'per-day': { dedup: [['phone_number', 'call_date'], 'recording_url'] },
        },
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  it('keeps two calls about one order as two calls, both delivered', async () => {
    const placed = await send(server, { order_id: 'ORD-7', first_name: 'Asha', call_outcome: 'order placed' });
    const cancelled = await send(server, { order_id: 'ORD-7', first_name: 'Asha', call_outcome: 'order cancelled' });
    expect(placed.status).toBe('accepted');
    expect(cancelled.status).toBe('accepted');
    expect(cancelled.id).not.toBe(placed.id);
    // No call id and no recording: each is keyed on its own content.
    expect(placed.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(cancelled.dedup_key).not.toBe(placed.dedup_key);
    await until(() => [placed.id, cancelled.id].every((id) => jsonlRecords(server.dataDir).some((r) => r.id === id)));
  });

  it('takes a repeat of the same request for a duplicate, counted on the first call, with its body kept', async () => {
    const body = {
      recording_url: 'https://rec.example/dup-1.mp3',
      first_name: 'Ravi',
      call_outcome: 'callback requested',
    };
    const first = await send(server, body);
    const again = await send(server, body);
    expect(again).toEqual({
      status: 'duplicate',
      id: first.id,
      dedup_key: 'recording_url:https://rec.example/dup-1.mp3',
    });
    const call = await admin<CallDetail>(server, `/calls/${first.id}`);
    expect(call.duplicates).toBe(1);
    expect(call.receipts.map((r) => r.outcome)).toEqual(['accepted', 'duplicate']);
    expect(JSON.parse(call.receipts[1]!.rawBody!)).toEqual(body);
  });

  it('keeps a conflict on recording_url as a call of its own, with conflicts_with and no problem; its own repeats are its duplicates', async () => {
    const url = 'https://rec.example/conflict-1.mp3';
    const base = {
      recording_url: url,
      first_name: 'Meena',
      last_name: 'Iyer',
      phone_number: '+919812345678',
      call_date: '2026-11-21',
      call_duration: 60,
      call_outcome: 'order placed',
      call_summary: 'Ordered tea.',
    };
    const first = await send(server, base);
    const other = { ...base, call_outcome: 'not interested', call_summary: 'Declined.' };
    const conflict = await send(server, other);
    expect(conflict.status).toBe('accepted');
    expect(conflict.id).not.toBe(first.id);
    expect(conflict.conflicts_with).toBe(first.id);
    expect(conflict.problems).toEqual([]);
    expect(conflict.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    const stored = await admin<CallDetail>(server, `/calls/${conflict.id}`);
    expect(stored.record).toMatchObject({
      conflicts_with: first.id,
      dedup_key: conflict.dedup_key,
      problems: [],
      data: { call_outcome: 'not interested' },
    });
    // The repeat of the conflicting call is its duplicate; a repeat of the first is still the first's.
    expect(await send(server, other)).toEqual({ status: 'duplicate', id: conflict.id, dedup_key: conflict.dedup_key });
    expect((await send(server, base)).id).toBe(first.id);
    await until(() => jsonlRecords(server.dataDir).some((r) => r.id === conflict.id && r.conflicts_with === first.id));
  });

  it('never merges calls with nothing in them: every value "", an empty body, or only fixed query parameters', async () => {
    const empties: Reply[] = [];
    for (let i = 0; i < 2; i++) {
      empties.push(await send(server, { first_name: '', last_name: '  ', phone_number: '', call_outcome: '' }));
      const bare = await fetch(`${server.url}/webhooks/end-of-call?assistant=priya`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(bare.status).toBe(200);
      empties.push((await bare.json()) as Reply);
    }
    expect(empties.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted', 'accepted']);
    expect(empties.map((r) => r.dedup_key)).toEqual([null, null, null, null]);
    expect(new Set(empties.map((r) => r.id)).size).toBe(4);
    const call = await admin<StoredCall>(server, `/calls/${empties[1]!.id}`);
    expect(call.record.dedup_key).toBeNull();
    expect(call.raw.query).toEqual({ assistant: 'priya' });
  });

  it('keeps two calls that differ only in values that failed their checks as two calls', async () => {
    const first = await send(server, { first_name: 'Asha', call_outcome: 'interested', phone_number: '98123' });
    const second = await send(server, { first_name: 'Asha', call_outcome: 'interested', phone_number: '45' });
    expect(second.status).toBe('accepted');
    expect(second.id).not.toBe(first.id);
    // Nothing valid at all, but what the caller said differs: two calls again; the same request twice is one.
    const wrong = { phone_number: '12', call_duration: 'abc' };
    const a = await send(server, wrong);
    const b = await send(server, { phone_number: '34', call_duration: 'xyz' });
    expect(b.id).not.toBe(a.id);
    expect(await send(server, wrong)).toEqual({ status: 'duplicate', id: a.id, dedup_key: a.dedup_key });
  });

  it('keys on every field of a composite entry, so the same caller on another day is another call', async () => {
    const call = { phone_number: '98123 45678', first_name: 'Asha', call_outcome: 'order placed' };
    const monday = await send(server, { ...call, call_date: '2026-11-23' }, 'per-day');
    const tuesday = await send(server, { ...call, call_date: '24/11/2026' }, 'per-day');
    expect(monday.dedup_key).toBe('phone_number+call_date:+919812345678|2026-11-23');
    expect(tuesday.dedup_key).toBe('phone_number+call_date:+919812345678|2026-11-24');
    expect(tuesday.status).toBe('accepted');
    expect(await send(server, { ...call, call_date: '23-11-2026' }, 'per-day')).toEqual({
      status: 'duplicate',
      id: monday.id,
      dedup_key: monday.dedup_key,
    });
    // Without the date the composite entry gives no key, and the next entry (none present) leaves the content hash.
    expect((await send(server, call, 'per-day')).dedup_key).toMatch(/^sha256:/);
  });

  it('keeps a conflict under an order_id as its own call, with conflicts_with', async () => {
    const first = await send(server, { order_id: 'ORD-9', call_outcome: 'order placed' }, 'orders');
    const second = await send(server, { order_id: 'ORD-9', call_outcome: 'order cancelled' }, 'orders');
    expect(first.dedup_key).toBe('order_id:ORD-9');
    expect(second).toMatchObject({ status: 'accepted', conflicts_with: first.id });
  });

  it('with on_conflict: duplicate, answers a different call about one order as a duplicate and keeps its body on the receipt', async () => {
    const first = await send(server, { order_id: 'ORD-5', call_outcome: 'order placed' }, 'one-per-order');
    const second = await send(server, { order_id: 'ORD-5', call_outcome: 'order cancelled' }, 'one-per-order');
    expect(second).toEqual({ status: 'duplicate', id: first.id, dedup_key: 'order_id:ORD-5' });
    const call = await admin<CallDetail>(server, `/calls/${first.id}`);
    expect(call.duplicates).toBe(1);
    expect(call.record.data.call_outcome).toBe('order placed');
    expect(call.receipts.map((r) => r.outcome)).toEqual(['accepted', 'duplicate']);
    expect(JSON.parse(call.receipts[1]!.rawBody!)).toEqual({ order_id: 'ORD-5', call_outcome: 'order cancelled' });
  });
});
