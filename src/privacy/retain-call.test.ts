import { describe, expect, it } from 'vitest';
import type { CallRecord, RawRequest } from '../record.js';
import type { CallEdit } from '../store/admin-queries.js';
import { callWithout, droppedRaw, type StoredCallText } from './retain-call.js';

const AT = '2026-01-02T03:04:05.000Z';

function storedCall(overrides: Partial<StoredCallText> = {}): StoredCallText {
  const record: CallRecord = {
    id: 'c1',
    hook: 'end-of-call',
    dedup_key: 'recording_url:https://rec.example/1.mp3',
    received_at: '2026-01-01T00:00:00.000Z',
    source: 'webhook',
    revision: 2,
    data: { first_name: 'Asha', recording_url: 'https://rec.example/1.mp3' },
    extra: { recording_url: 'also here', other: 1 },
    problems: [
      { field: 'recording_url', code: 'invalid_format', message: 'recording_url "x" is not a URL', value: 'x' },
    ],
  };
  const raw: RawRequest = {
    method: 'POST',
    content_type: 'application/json',
    query: { recording_url: 'q', k: 'v' },
    body: '{"first_name":"Asha","recording_url":"https://rec.example/1.mp3"}',
  };
  const edit: CallEdit = {
    at: AT,
    revision: 2,
    fields: { recording_url: { before: 'x', after: 'y' }, first_name: {} },
  };
  return {
    id: 'c1',
    record: JSON.stringify(record),
    raw: JSON.stringify(raw),
    dedupKey: record.dedup_key,
    edits: [{ id: 7, entry: JSON.stringify(edit) }],
    receipts: [
      {
        id: 9,
        contentType: 'application/x-www-form-urlencoded',
        rawBody: Buffer.from('first_name=Asha&recording_url=https%3A%2F%2Frec'),
        query: '?recording_url=q&k=v',
      },
    ],
    ...overrides,
  };
}

describe("a field's retention on one stored call (docs/reference.md#retention)", () => {
  it('removes it from data, extra, problems, edits, the raw request and the receipts, and says so in raw', () => {
    const changes = callWithout('recording_url', storedCall(), AT)!;
    const record = JSON.parse(changes.record!) as CallRecord;
    expect(record.data).toEqual({ first_name: 'Asha' });
    expect(record.extra).toEqual({ other: 1 });
    expect(record.problems).toEqual([
      { field: 'recording_url', code: 'invalid_format', message: 'recording_url: its value was removed by retention' },
    ]);
    expect(record.dedup_key).toBe('retention:c1');
    expect(changes.dedupKey).toBe('retention:c1');
    expect(JSON.parse(changes.raw!)).toEqual({
      method: 'POST',
      content_type: 'application/json',
      query: { k: 'v' },
      body: '{"first_name":"Asha"}',
      retention: { fields: ['recording_url'] },
    });
    expect(changes.edits).toEqual([
      {
        id: 7,
        entry: JSON.stringify({
          at: AT,
          revision: 2,
          fields: { recording_url: { removed: 'retention' }, first_name: {} },
        }),
      },
    ]);
    expect(changes.receipts).toEqual([{ id: 9, rawBody: Buffer.from('first_name=Asha'), query: '?k=v' }]);
    // Nothing is left to remove: a second pass writes nothing.
    const again = storedCall({
      record: changes.record!,
      raw: changes.raw!,
      dedupKey: changes.dedupKey!,
      edits: changes.edits,
      receipts: [
        {
          id: 9,
          contentType: 'application/x-www-form-urlencoded',
          rawBody: Buffer.from('first_name=Asha'),
          query: '?k=v',
        },
      ],
    });
    expect(callWithout('recording_url', again, AT)).toBeUndefined();
  });

  it('leaves a call without the field alone, and a dedup key of other fields', () => {
    expect(callWithout('call_summary', storedCall(), AT)).toBeUndefined();
    const other = storedCall({ dedupKey: 'call_id+first_name:1|Asha' });
    expect(
      callWithout('call_id', { ...other, record: other.record.replace('recording_url:', 'call_id+first_name:') }, AT)
        ?.dedupKey,
    ).toBe('retention:c1');
  });

  it('drops a body it cannot cut precisely, with its query, and keeps method and content type', () => {
    const raw: RawRequest = {
      method: 'POST',
      content_type: 'multipart/form-data; boundary=b',
      query: { a: '1' },
      body: '--b\r\nContent-Disposition: form-data; name="recording_url"\r\n\r\nx\r\n--b--',
    };
    const changes = callWithout(
      'recording_url',
      storedCall({ raw: JSON.stringify(raw), edits: [], receipts: [] }),
      AT,
    )!;
    expect(JSON.parse(changes.raw!)).toEqual({
      method: 'POST',
      content_type: 'multipart/form-data; boundary=b',
      query: {},
      body: '',
      retention: { dropped: AT, fields: ['recording_url'] },
    });
  });

  it("drops a voice platform's event whole: it names the field its own way, nested", () => {
    const record = JSON.parse(storedCall().record) as CallRecord;
    const event = JSON.stringify({
      event: 'call_analyzed',
      call: { recording_url_v2: 'x', recordingUrl: 'https://r' },
    });
    const raw: RawRequest = { method: 'POST', content_type: 'application/json', query: {}, body: event };
    const call = storedCall({
      record: JSON.stringify({ ...record, platform: 'retell' }),
      raw: JSON.stringify(raw),
      receipts: [{ id: 3, contentType: 'application/json', rawBody: Buffer.from(event), query: '' }],
    });
    const changes = callWithout('recording_url', call, AT)!;
    expect(JSON.parse(changes.raw!)).toMatchObject({ body: '', retention: { dropped: AT, fields: ['recording_url'] } });
    expect(changes.receipts).toEqual([{ id: 3, rawBody: null, query: null }]);
    // A platform's call that never held the field, whose event does not name it, keeps its event.
    const without = JSON.parse(call.record) as CallRecord;
    expect(callWithout('call_summary', { ...call, record: JSON.stringify(without) }, AT)).toBeUndefined();
  });

  it("drops a raw request's body and query once, keeping what the field's retention said", () => {
    const raw = JSON.stringify({
      method: 'GET',
      content_type: null,
      query: { a: '1' },
      body: 'x',
      retention: { fields: ['summary'] },
    });
    const dropped = droppedRaw(raw, AT)!;
    expect(JSON.parse(dropped)).toEqual({
      method: 'GET',
      content_type: null,
      query: {},
      body: '',
      retention: { fields: ['summary'], dropped: AT },
    });
    expect(droppedRaw(dropped, AT)).toBeUndefined();
  });
});
