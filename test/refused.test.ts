import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../src/record.js';
import { storesUnderTest } from './helpers/database.js';
import { ADMIN, jsonlRecords, KEY, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * docs/reference.md#refused-requests: a request refused with 400 or 415 is a lost call unless someone acts on it. Its
 * receipt keeps the raw body and query; the admin API lists it and ingests it again, as it came or corrected, as a call
 * with `source: recovered`, once. Run against both stores.
 */

type Receipt = {
  id: number;
  hook: string;
  status: number;
  outcome: string;
  error: string | null;
  rawBody?: string;
  rawBodyBase64?: string;
  query: string | null;
  ingestedAs: string | null;
  callId: string | null;
};

const stores = storesUnderTest(serviceUrl('postgres'), 'callhook_refused');

describe.each(stores)('refused requests on %s', (_, open) => {
  let server: TestServer;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    server = await startServer({ env: opened.env });
  });
  afterAll(async () => {
    await server?.close();
    await drop?.();
  });

  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...init.headers },
    });
  const refuse = async (body: string | Uint8Array, contentType: string | null, query = '') => {
    const res = await fetch(`${server.url}/webhooks/end-of-call${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, ...(contentType ? { 'content-type': contentType } : {}) },
      body,
    });
    return res.status;
  };
  const refused = async (): Promise<Receipt[]> => {
    const res = await admin('/receipts?outcome=rejected&order=desc');
    expect(res.status).toBe(200);
    return ((await res.json()) as { receipts: Receipt[] }).receipts;
  };
  const ingest = (id: number, body?: unknown) =>
    admin(`/receipts/${id}/ingest`, { method: 'POST', body: body === undefined ? '' : JSON.stringify(body) });

  it('lists a request refused for broken JSON with its error, body and query, and ingests it corrected as source recovered, once', async () => {
    const broken = '{"first_name": "Asha", "call_outcome": "order placed", ';
    expect(await refuse(broken, 'application/json', '?call_id=lost-1')).toBe(400);
    const [receipt] = await refused();
    expect(receipt).toMatchObject({
      hook: 'end-of-call',
      status: 400,
      outcome: 'rejected',
      rawBody: broken,
      query: '?call_id=lost-1',
      ingestedAs: null,
      callId: null,
    });
    expect(receipt!.error).toMatch(/cannot be parsed/);

    // As it came, it is still broken: refused with the same error, and nothing changes.
    const again = await ingest(receipt!.id);
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 400, message: expect.stringMatching(/cannot be parsed/) });
    expect((await refused())[0]!.ingestedAs).toBeNull();

    const fixed = await ingest(receipt!.id, { body: `${broken.trimEnd().slice(0, -1)}}` });
    expect(fixed.status).toBe(200);
    const reply = (await fixed.json()) as { status: string; id: string; dedup_key: string; receipt: number };
    expect(reply).toMatchObject({ status: 'accepted', dedup_key: 'call_id:lost-1', receipt: receipt!.id });

    const call = (await (await admin(`/calls/${reply.id}`)).json()) as {
      record: CallRecord;
      raw: { query: unknown };
      receipts: Receipt[];
    };
    expect(call.record).toMatchObject({
      source: 'recovered',
      data: { first_name: 'Asha', call_outcome: 'order placed' },
      extra: { call_id: 'lost-1' },
    });
    // The call keeps the time the sender sent it; its receipt is the refused one, marked with the call it became.
    expect(call.record.received_at).toBe((await (await admin(`/receipts/${receipt!.id}`)).json()).receivedAt);
    expect(call.raw.query).toEqual({ call_id: 'lost-1' });
    expect(call.receipts).toEqual([
      expect.objectContaining({
        id: receipt!.id,
        outcome: 'rejected',
        status: 400,
        ingestedAs: reply.id,
        rawBody: broken,
      }),
    ]);
    await until(() => jsonlRecords(server.dataDir).some((r) => r.id === reply.id && r.source === 'recovered'));

    const twice = await ingest(receipt!.id, { body: '{"first_name": "Asha"}' });
    expect(twice.status).toBe(409);
    expect(await twice.json()).toMatchObject({
      error: 409,
      message: expect.stringContaining(`ingested already, as call ${reply.id}`),
    });
    expect((await admin('/calls?source=recovered')).status).toBe(200);
    const recovered = (await (await admin('/calls?source=recovered')).json()) as { calls: { record: CallRecord }[] };
    expect(recovered.calls.map((c) => c.record.id)).toEqual([reply.id]);
  });

  it('shows a key inside a refused body that is not UTF-8 masked, in base64 as in text', async () => {
    const body = Buffer.concat([Buffer.from(`note=${KEY}&x=`), Buffer.from([0xe9])]);
    expect(await refuse(body, 'application/x-www-form-urlencoded')).toBe(400);
    const [receipt] = await refused();
    const shown = Buffer.from(receipt!.rawBodyBase64!, 'base64');
    expect(shown.includes(KEY)).toBe(false);
    expect(shown).toEqual(Buffer.concat([Buffer.from('note=***&x='), Buffer.from([0xe9])]));
    expect(JSON.stringify(await (await admin(`/receipts/${receipt!.id}`)).json())).not.toContain(KEY);
  });

  it('ingests a 415 with the content type corrected, and bytes that are not UTF-8 given in base64', async () => {
    expect(await refuse('{"call_id":"lost-2","first_name":"Ravi"}', 'text/plain')).toBe(415);
    const [plain] = await refused();
    expect(plain).toMatchObject({ status: 415, rawBody: '{"call_id":"lost-2","first_name":"Ravi"}' });
    const fixed = await ingest(plain!.id, { content_type: 'application/json' });
    expect(await fixed.json()).toMatchObject({ status: 'accepted', dedup_key: 'call_id:lost-2' });

    const latin1 = Buffer.concat([Buffer.from('call_id=lost-3&first_name=Jos'), Buffer.from([0xe9])]);
    expect(await refuse(latin1, 'application/x-www-form-urlencoded')).toBe(400);
    const [bytes] = await refused();
    expect(bytes!.rawBody).toBeUndefined();
    expect(Buffer.from(bytes!.rawBodyBase64!, 'base64')).toEqual(latin1);
    const corrected = Buffer.from('call_id=lost-3&first_name=Jos%C3%A9').toString('base64');
    const reply = (await (await ingest(bytes!.id, { body_base64: corrected })).json()) as { id: string };
    const call = (await (await admin(`/calls/${reply.id}`)).json()) as { record: CallRecord };
    expect(call.record.data.first_name).toBe('José');
  });

  it('answers a receipt that is not a refused request, or none, with the Error object', async () => {
    expect((await ingest(999_999_999)).status).toBe(404);
    expect((await ingest(Number.NaN)).status).toBe(404);
    const res = await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"call_id":"fine-1"}',
    });
    const { id } = (await res.json()) as { id: string };
    const call = (await (await admin(`/calls/${id}`)).json()) as { receipts: Receipt[] };
    const accepted = await ingest(call.receipts[0]!.id);
    expect(accepted.status).toBe(409);
    expect(await accepted.json()).toEqual({ error: 409, message: expect.stringContaining('is not a refused request') });
    const both = await ingest(call.receipts[0]!.id, { body: 'x', body_base64: 'eA==' });
    expect(both.status).toBe(400);
  });

  it('lists receipts by outcome and hook, newest first with order=desc, a page at a time', async () => {
    for (let i = 0; i < 3; i++) expect(await refuse(`{broken ${i}`, 'application/json')).toBe(400);
    const page = async (query: string) =>
      (await (await admin(`/receipts?${query}`)).json()) as { receipts: Receipt[]; next: number | null };
    const newest = await page('outcome=rejected&order=desc&limit=2');
    expect(newest.receipts.map((r) => r.rawBody)).toEqual(['{broken 2', '{broken 1']);
    const rest = await page(`outcome=rejected&order=desc&limit=2&after=${newest.next}`);
    expect(rest.receipts[0]!.rawBody).toBe('{broken 0');
    const oldest = await page('outcome=rejected&limit=1');
    expect(oldest.receipts[0]!.id).toBeLessThan(newest.receipts[0]!.id);
    expect((await page('outcome=rejected&hook=nothing-here')).receipts).toEqual([]);
    // The documented form of the URL: parameters given empty filter nothing.
    expect((await page('outcome=rejected&hook=&from=&to=&order=desc&limit=1')).receipts[0]!.rawBody).toBe('{broken 2');
    expect((await admin('/receipts?outcome=lost')).status).toBe(400);
  });
});
