import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../record.js';
import type { StoredCall } from '../store/admin-queries.js';
import { callLine } from './call-line.js';

const stored = (record: Partial<CallRecord>, duplicates = 0): StoredCall => ({
  record: {
    id: '01a2018a-c98d-724e-87a9-c860e9200233',
    hook: 'end-of-call',
    dedup_key: 'call_id:c1',
    received_at: '2026-11-21T10:00:00.000Z',
    source: 'webhook',
    revision: 1,
    data: {},
    extra: {},
    problems: [],
    ...record,
  },
  status: 'accepted',
  raw: { method: 'POST', content_type: 'application/json', query: {}, body: '{}' },
  duplicates,
});
const at = (iso: string) => `at ${iso}`;

describe('a line of calls list', () => {
  it("has the caller's name, number and outcome beside id, received time, hook and status", () => {
    const call = stored(
      { data: { first_name: 'Asha', last_name: 'Verma', phone_number: '+919812345678', call_outcome: 'order placed' } },
      2,
    );
    expect(callLine(call, at)).toEqual([
      '01a2018a-c98d-724e-87a9-c860e9200233',
      'at 2026-11-21T10:00:00.000Z',
      'end-of-call',
      'accepted',
      'Asha Verma',
      '+919812345678',
      'order placed',
      'call_id:c1',
      '+2 duplicates',
    ]);
  });

  it('shows what a call has: empty fields where it has none, undeclared ones from extra', () => {
    expect(callLine(stored({ data: { last_name: 'Verma' }, dedup_key: null }), at).slice(4)).toEqual([
      'Verma',
      '',
      '',
      '',
      '',
    ]);
    const other = stored({ hook: 'orders', data: { order_id: 'A1' }, extra: { first_name: 'Ravi', call_outcome: 7 } });
    expect(callLine(other, at).slice(4, 7)).toEqual(['Ravi', '', '7']);
  });

  it('keeps each call on one line and each field in its column', () => {
    const call = stored({ data: { first_name: 'Asha\tX', call_outcome: 'called back\r\nlater' } });
    const fields = callLine(call, at);
    expect(fields).toHaveLength(9);
    expect(fields[4]).toBe('Asha X');
    expect(fields[6]).toBe('called back later');
  });
});
