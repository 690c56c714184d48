import { describe, expect, it } from 'vitest';
import type { CallRecord, Scalar } from '../record.js';
import { callerHistory, LISTED_CALLS } from './history.js';

let n = 0;
const record = (data: Record<string, Scalar>, extra: Record<string, unknown> = {}): CallRecord => ({
  id: `id-${++n}`,
  hook: 'end-of-call',
  dedup_key: `k-${n}`,
  received_at: `2026-11-${String(n).padStart(2, '0')}T10:00:00.000Z`,
  source: 'webhook',
  revision: 1,
  data,
  extra,
  problems: [],
});

describe('callerHistory', () => {
  it('answers nulls and empty lists for a caller with no calls', () => {
    expect(callerHistory('+919812345678', 0, [])).toEqual({
      phone_number: '+919812345678',
      count: 0,
      last_call_date: null,
      last_outcome: null,
      last_sentiment: null,
      last_summary: null,
      open_order_ids: [],
      calls: [],
    });
  });

  it("lists an order as open unless its newest call's outcome closes it, newest order first", () => {
    const newestFirst = [
      record({ order_id: 'ORD-3', call_outcome: 'Refund issued' }),
      record({ order_id: 'ORD-1', call_outcome: 'callback requested' }),
      record({ order_id: 'ORD-2', call_outcome: 'order placed' }),
      record({ order_id: 'ORD-1', call_outcome: 'Order CANCELLED' }), // older than ORD-1's reopening call above
      record({ order_id: 'ORD-4', call_outcome: 'delivered' }),
      record({ order_id: '  ', call_outcome: 'order placed' }),
      record({ call_outcome: 'not interested' }),
    ];
    expect(callerHistory('+919812345678', 7, newestFirst).open_order_ids).toEqual(['ORD-1', 'ORD-2']);
  });

  it('takes the last call from the newest record, its date from received_at when it has no call_date', () => {
    const history = callerHistory('+919812345678', 2, [
      record({ call_outcome: 'order placed', sentiment_analysis: 'Positive' }, { call_summary: 'said in extra' }),
      record({ call_outcome: 'x', call_date: '2026-10-01' }),
    ]);
    expect(history).toMatchObject({
      last_outcome: 'order placed',
      last_sentiment: 'Positive',
      last_summary: 'said in extra',
    });
    expect(history.last_call_date).toBe(history.calls[0]!.received_at.slice(0, 10));
    expect(history.calls[0]).toEqual({
      id: history.calls[0]!.id,
      received_at: history.calls[0]!.received_at,
      call_date: null,
      outcome: 'order placed',
      sentiment: 'Positive',
      summary: 'said in extra',
      order_id: null,
    });
  });

  it('lists at most five calls but keeps the count of all, and reads open orders from every record given', () => {
    const newestFirst = Array.from({ length: 8 }, (_, i) =>
      record({ order_id: `ORD-${i}`, call_outcome: 'order placed' }),
    );
    const history = callerHistory('+919812345678', 42, newestFirst);
    expect(history.count).toBe(42);
    expect(history.calls).toHaveLength(LISTED_CALLS);
    expect(history.open_order_ids).toHaveLength(8);
  });

  it('carries the problems of a request without a usable number', () => {
    const problems = [{ field: 'phone_number', code: 'missing_required' as const, message: 'required' }];
    expect(callerHistory(null, 0, [], problems)).toMatchObject({ phone_number: null, count: 0, problems });
    expect(callerHistory(null, 0, [])).not.toHaveProperty('problems');
  });
});
