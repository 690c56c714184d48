import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../src/store/admin-queries.js';
import { ADMIN, KEY, post, sampleCall, startServer, type TestServer } from './helpers/server.js';

/**
 * GET /admin/calls as an operator uses it (docs/reference.md#operating): a number in any spelling, newest first, by
 * source.
 */
describe('the admin list of calls', () => {
  let server: TestServer;
  const ids: string[] = [];
  beforeAll(async () => {
    server = await startServer();
    for (const phone of ['+91 98123 45678', '098123-45678', '+1 415 555 0100']) {
      ids.push(((await (await post(server.url, sampleCall({ phone_number: phone }))).json()) as { id: string }).id);
    }
  });
  afterAll(() => server?.close());

  const list = async (query: string) => {
    const res = await fetch(`${server.url}/admin/calls?${query}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as { calls: StoredCall[]; next: string | null };
  };
  const listed = async (query: string) => (await list(query)).calls.map((c) => c.record.id);

  it('finds a caller by any spelling of the number, read as intake reads it', async () => {
    for (const spelling of ['+919812345678', '98123 45678', '0091 98123 45678', '+91-98123-45678', '(0)98123 45678']) {
      expect(await listed(`phone=${encodeURIComponent(spelling)}`), spelling).toEqual([ids[0], ids[1]]);
    }
    expect(await listed(`phone=${encodeURIComponent('+1 (415) 555-0100')}`)).toEqual([ids[2]]);
    expect(await listed('phone=not-a-number')).toEqual([]);
    // Given empty, as a form leaves a field, it filters nothing.
    expect(await listed('phone=&hook=&from=&to=')).toEqual(ids);
  });

  it('lists newest first with order=desc, a page at a time', async () => {
    const first = await list('order=desc&limit=2');
    expect(first.calls.map((c) => c.record.id)).toEqual([ids[2], ids[1]]);
    expect(await listed(`order=desc&after=${first.next}`)).toEqual([ids[0]]);
    expect(await listed('order=asc&limit=1')).toEqual([ids[0]]);
    const bad = await fetch(`${server.url}/admin/calls?order=newest`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(bad.status).toBe(400);
  });

  it('filters by source', async () => {
    expect(await listed('source=webhook')).toEqual(ids);
    expect(await listed('source=simulate')).toEqual([]);
    const bad = await fetch(`${server.url}/admin/calls?source=fax`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(await bad.json()).toMatchObject({ error: 400, message: expect.stringMatching(/^Bad request: source: /) });
  });

  it('lists test traffic only when asked: test_calls=true or a source that names it (docs/reference.md#test-traffic)', async () => {
    const replayed = ((await (await post(server.url, sampleCall(), { source: 'replay' })).json()) as { id: string }).id;
    const simulated = ((await (await post(server.url, sampleCall(), { source: 'simulate' })).json()) as { id: string })
      .id;
    expect(await listed('')).toEqual(ids);
    expect(await listed('test_calls=false')).toEqual(ids);
    expect(await listed('order=desc&limit=2')).toEqual([ids[2], ids[1]]);
    expect(await listed('test_calls=true')).toEqual([...ids, replayed, simulated]);
    expect(await listed('test_calls=true&order=desc&limit=2')).toEqual([simulated, replayed]);
    expect(await listed('source=replay')).toEqual([replayed]);
    expect(await listed('source=simulate&test_calls=false')).toEqual([simulated]);
    // Its own page still shows it, saying where it came from.
    const own = await fetch(`${server.url}/admin/calls/${replayed}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(((await own.json()) as StoredCall).record.source).toBe('replay');
    const bad = await fetch(`${server.url}/admin/calls?test_calls=yes`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(await bad.json()).toMatchObject({
      error: 400,
      message: expect.stringMatching(/^Bad request: test_calls: /),
    });
    // The OpenAPI document says so.
    const doc = (await (
      await fetch(`${server.url}/admin/openapi.json`, { headers: { authorization: `Bearer ${ADMIN}` } })
    ).json()) as { paths: Record<string, { get: { parameters: { name: string; description?: string }[] } }> };
    const parameter = doc.paths['/admin/calls']!.get.parameters.find((p) => p.name === 'test_calls');
    expect(parameter?.description).toMatch(/test traffic/);
  });

  it('masks a secret an error reply would quote (docs/reference.md#secrets): a webhook key asked for as a call id', async () => {
    const res = await fetch(`${server.url}/admin/calls/${KEY}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual({ error: 404, message: 'Not found: no call with id ***' });
  });
});

/**
 * docs/reference.md#time-zone: a date given to the admin API's `from` / `to` is that day in the configured `timezone`.
 */
describe('a date in from and to', () => {
  it('is the day in the configured timezone, not in UTC', async () => {
    // A zone far from UTC, chosen by the hour so that UTC's reading of the same date would give the other answer:
    // 14 hours ahead after noon UTC (its date is UTC's tomorrow), 11 hours behind before (its date is UTC's yesterday).
    const ahead = new Date().getUTCHours() >= 12;
    const timezone = ahead ? 'Pacific/Kiritimati' : 'Pacific/Pago_Pago';
    const server = await startServer({ config: { timezone } });
    try {
      const { id } = (await (await post(server.url, sampleCall())).json()) as { id: string };
      const day = new Intl.DateTimeFormat('en-CA', {
        timeZone: timezone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
      }).format(new Date());
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      const query = ahead ? `from=${day}` : `to=${next}`;
      const res = await fetch(`${server.url}/admin/calls?${query}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(((await res.json()) as { calls: StoredCall[] }).calls.map((c) => c.record.id)).toEqual([id]);
      const receipts = await fetch(`${server.url}/admin/receipts?${query}`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      expect(((await receipts.json()) as { receipts: unknown[] }).receipts).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
