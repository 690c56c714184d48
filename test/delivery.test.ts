import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { ADMIN, jsonlRecords, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/** Delivery end to end: a real receiver, real HTTP sinks, retries, dead letters, filters and the admin API. */

let crm: Receiver;
let slackish: Receiver;
let server: TestServer;

const admin = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(`${server.url}/admin${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...init.headers },
  });
  return { status: res.status, body: await res.json() };
};
const callDetail = async (id: string) => (await admin(`/calls/${id}`)).body;

beforeAll(async () => {
  crm = await startReceiver();
  slackish = await startReceiver();
  server = await startServer({
    config: {
      // The auth test below sends 24 wrong tokens from one address.
      auth_limit: { max: 100 },
      sinks: [
        { name: 'jsonl', type: 'jsonl' },
        {
          name: 'crm',
          type: 'http',
          url: `${crm.url}/calls`,
          headers: { Authorization: 'Bearer crm-token-0123456789' },
          retry: { attempts: 4, schedule: ['50ms'], jitter: 0 },
        },
        {
          name: 'orders',
          type: 'http',
          url: `${slackish.url}/orders`,
          when: {
            all: [
              { field: 'call_outcome', eq: 'order placed' },
              { field: 'valid', eq: true },
            ],
          },
          retry: { attempts: 2, schedule: ['50ms'], jitter: 0 },
        },
      ],
    },
  });
});
afterAll(async () => {
  await server.close();
  await crm.close();
  await slackish.close();
});

describe('an HTTP sink', () => {
  it('that fails with 500 twice and then answers 200 gets the record once, with three attempts recorded', async () => {
    crm.respond((_req, res, n) => res.writeHead(n <= 2 ? 500 : 200).end(n <= 2 ? 'boom' : 'ok'));
    crm.received.length = 0;
    const { id } = await (await post(server.url, sampleCall({ call_id: 'retry-1' }))).json();
    await until(
      async () => (await callDetail(id)).deliveries.find((d: { sink: string }) => d.sink === 'crm')?.state === 'done',
    );
    const detail = await callDetail(id);
    const attempts = detail.attempts.filter((a: { sink: string }) => a.sink === 'crm');
    expect(
      attempts.map((a: { attempt: number; outcome: string; httpStatus: number }) => [
        a.attempt,
        a.outcome,
        a.httpStatus,
      ]),
    ).toEqual([
      [1, 'retry', 500],
      [2, 'retry', 500],
      [3, 'ok', null],
    ]);
    expect(attempts[0].error).toBe('HTTP 500: boom');
    expect(crm.received.filter((r) => r.headers['idempotency-key'] === `${id}:crm`)).toHaveLength(3);
    const delivered = crm.received.filter((r) => r.headers['x-callhook-attempt'] === '3');
    expect(delivered).toHaveLength(1);
    expect(JSON.parse(delivered[0]!.body)).toMatchObject({ id, hook: 'end-of-call', data: { first_name: 'Asha' } });
    expect(delivered[0]!.headers.authorization).toBe('Bearer crm-token-0123456789');
  });

  it('that answers 400 leaves a dead delivery after one attempt; retried after the fix, it is delivered', async () => {
    crm.respond((_req, res) => res.writeHead(400).end('bad field'));
    crm.received.length = 0;
    const { id } = await (await post(server.url, sampleCall({ call_id: 'dead-1' }))).json();
    await until(async () => (await admin(`/deliveries?state=dead&sink=crm&call=${id}`)).body.deliveries.length === 1);
    expect(crm.received).toHaveLength(1);
    const detail = await callDetail(id);
    expect(detail.attempts.filter((a: { sink: string }) => a.sink === 'crm')).toMatchObject([
      { attempt: 1, outcome: 'dead', httpStatus: 400 },
    ]);

    crm.respond((_req, res) => res.writeHead(200).end('ok'));
    const retried = await admin('/deliveries/retry', {
      method: 'POST',
      body: JSON.stringify({ sink: 'crm', call_id: id }),
    });
    expect(retried).toEqual({ status: 200, body: { retried: 1 } });
    await until(
      async () => (await callDetail(id)).deliveries.find((d: { sink: string }) => d.sink === 'crm')?.state === 'done',
    );
    expect(crm.received).toHaveLength(2);
  });

  it('honours a Retry-After longer than its schedule', async () => {
    crm.respond((_req, res, n) =>
      n === 1 ? res.writeHead(429, { 'retry-after': '1' }).end('slow down') : res.writeHead(200).end('ok'),
    );
    crm.received.length = 0;
    const started = Date.now();
    const { id } = await (await post(server.url, sampleCall({ call_id: 'retry-after-1' }))).json();
    await until(
      async () => (await callDetail(id)).deliveries.find((d: { sink: string }) => d.sink === 'crm')?.state === 'done',
    );
    expect(crm.received).toHaveLength(2);
    // The schedule says 50 ms; the receiver asked for 1 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });
});

describe('when filters', () => {
  it('are evaluated when the record is stored: the outbox holds only the deliveries that are due', async () => {
    crm.respond((_req, res) => res.writeHead(200).end('ok'));
    const order = await (
      await post(server.url, sampleCall({ call_id: 'filter-order', call_outcome: ' Order Placed ' }))
    ).json();
    const other = await (
      await post(server.url, sampleCall({ call_id: 'filter-other', call_outcome: 'not interested' }))
    ).json();
    const invalid = await (
      await post(
        server.url,
        sampleCall({ call_id: 'filter-invalid', call_outcome: 'order placed', call_date: 'someday' }),
      )
    ).json();
    const sinksOf = async (id: string) => (await callDetail(id)).deliveries.map((d: { sink: string }) => d.sink).sort();
    expect(await sinksOf(order.id)).toEqual(['crm', 'jsonl', 'orders']);
    expect(await sinksOf(other.id)).toEqual(['crm', 'jsonl']);
    expect(await sinksOf(invalid.id)).toEqual(['crm', 'jsonl']);
    await until(() => slackish.received.some((r) => JSON.parse(r.body).id === order.id));
  });
});

describe('the admin API', () => {
  it('redelivers a call to some or all of its sinks', async () => {
    crm.respond((_req, res) => res.writeHead(200).end('ok'));
    const { id } = await (await post(server.url, sampleCall({ call_id: 'again-1' }))).json();
    await until(async () => (await callDetail(id)).deliveries.every((d: { state: string }) => d.state === 'done'));
    crm.received.length = 0;
    const one = await admin(`/calls/${id}/redeliver`, { method: 'POST', body: JSON.stringify({ sinks: ['crm'] }) });
    expect(one).toEqual({ status: 200, body: { id, sinks: ['crm'], scheduled: 1 } });
    await until(() => crm.received.length === 1);
    // Received is not yet recorded: a delivery still in flight is left as it is by a redeliver.
    await until(async () => (await callDetail(id)).deliveries.every((d: { state: string }) => d.state === 'done'));
    const all = await admin(`/calls/${id}/redeliver`, { method: 'POST' });
    expect(all.body.sinks.sort()).toEqual(['crm', 'jsonl', 'orders']);
    await until(() => crm.received.length === 2);
    // The JSONL file still holds one line for the call.
    await until(async () => (await callDetail(id)).deliveries.every((d: { state: string }) => d.state === 'done'));
    expect(jsonlRecords(server.dataDir).filter((r) => r.id === id)).toHaveLength(1);
    expect(
      (await admin(`/calls/${id}/redeliver`, { method: 'POST', body: JSON.stringify({ sinks: ['nowhere'] }) })).status,
    ).toBe(400);
    expect((await admin('/calls/no-such-call/redeliver', { method: 'POST' })).status).toBe(404);
  });

  it('shows one call with its raw request, receipts, deliveries and attempts, secrets masked', async () => {
    const { id } = await (await post(server.url, sampleCall({ call_id: 'detail-1' }))).json();
    await post(server.url, sampleCall({ call_id: 'detail-1' }));
    await until(async () => (await callDetail(id)).attempts.length >= 2);
    const { status, body } = await admin(`/calls/${id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'accepted',
      duplicates: 1,
      record: { id },
      raw: { method: 'POST', content_type: 'application/json' },
    });
    expect(body.receipts.map((r: { outcome: string }) => r.outcome)).toEqual(['accepted', 'duplicate']);
    expect(JSON.stringify(body)).not.toContain('crm-token-0123456789');
  });

  it('lists calls by filter with a cursor, and deliveries by state and sink', async () => {
    for (const [i, sentiment] of ['Negative', 'negative', 'Positive'].entries())
      await post(
        server.url,
        sampleCall({ call_id: `list-${i}`, sentiment_analysis: sentiment, first_name: `Lister${i}` }),
      );
    const negative = await admin('/calls?sentiment=NEGATIVE&q=lister');
    expect(
      negative.body.calls.map((c: { record: { data: { first_name: string } } }) => c.record.data.first_name),
    ).toEqual(['Lister0', 'Lister1']);
    const first = await admin('/calls?q=lister&limit=2');
    expect(first.body.calls).toHaveLength(2);
    const second = await admin(`/calls?q=lister&limit=2&after=${first.body.next}`);
    expect(
      second.body.calls.map((c: { record: { data: { first_name: string } } }) => c.record.data.first_name),
    ).toEqual(['Lister2']);
    expect((await admin('/calls?status=bogus')).status).toBe(400);
    const badDate = await admin('/calls?from=2026-02-30');
    expect(badDate).toEqual({
      status: 400,
      body: { error: 400, message: expect.stringMatching(/^Bad request: from: /) },
    });
    expect(
      (await admin(`/calls?from=${new Date(Date.now() - 60_000).toISOString()}&q=lister`)).body.calls,
    ).toHaveLength(3);
    expect((await admin('/calls?to=2001-01-01&q=lister')).body.calls).toHaveLength(0);
    const done = await admin('/deliveries?state=done&sink=jsonl&limit=5');
    expect(done.body.deliveries.length).toBeGreaterThan(0);
    expect(
      done.body.deliveries.every((d: { state: string; sink: string }) => d.state === 'done' && d.sink === 'jsonl'),
    ).toBe(true);
  });

  it('serves an OpenAPI document of the admin and webhook routes', async () => {
    const { status, body } = await admin('/openapi.json');
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    expect(Object.keys(body.paths)).toEqual(
      expect.arrayContaining([
        '/webhooks/{hook}',
        '/admin/calls',
        '/admin/calls/{id}/redeliver',
        '/admin/deliveries/retry',
        '/admin/receipts',
        '/admin/receipts/{id}/ingest',
      ]),
    );
    // Every admin route the app answers is in the document.
    const routes = [
      '/calls',
      '/calls/{id}',
      '/calls/{id}/redeliver',
      '/calls/{id}/release',
      '/receipts',
      '/receipts/{id}',
      '/receipts/{id}/ingest',
      '/deliveries',
      '/deliveries/retry',
      '/deliveries/{id}/retry',
    ];
    for (const route of routes) expect(Object.keys(body.paths), route).toContain(`/admin${route}`);
  });

  it('refuses a missing or wrong token on every route, and the webhook key does not open it', async () => {
    const routes: [string, string][] = [
      ['GET', '/calls'],
      ['GET', '/calls/x'],
      ['POST', '/calls/x/redeliver'],
      ['POST', '/calls/x/release'],
      ['GET', '/deliveries'],
      ['POST', '/deliveries/retry'],
      ['POST', '/deliveries/1/retry'],
      ['GET', '/receipts'],
      ['GET', '/receipts/1'],
      ['POST', '/receipts/1/ingest'],
      ['GET', '/openapi.json'],
      ['POST', '/sinks/jsonl/redeliver'],
      ['GET', '/jobs/x'],
    ];
    for (const [method, path] of routes) {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer test-key-0123456789abcdef`]) {
        const res = await fetch(`${server.url}/admin${path}`, {
          method,
          headers: authorization ? { authorization } : {},
        });
        expect(res.status, `${method} ${path} ${authorization}`).toBe(401);
        expect(await res.json()).toEqual({ error: 401, message: expect.any(String) });
      }
    }
  });
});

describe('/metrics', () => {
  it('reports requests, reply latency, deliveries by sink and state, outbox depth and oldest pending age', async () => {
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^callhook_requests_total\{hook="end-of-call",outcome="accepted"\} \d+/m);
    expect(text).toMatch(/^callhook_requests_total\{hook="end-of-call",outcome="duplicate"\} \d+/m);
    expect(text).toMatch(/^callhook_reply_duration_seconds_bucket\{le="0.01",hook="end-of-call"\} \d+/m);
    expect(text).toMatch(/^callhook_deliveries\{sink="crm",state="done"\} [1-9]\d*/m);
    expect(text).toMatch(/^callhook_deliveries\{sink="crm",state="dead"\} \d+/m);
    expect(text).toMatch(/^callhook_outbox_depth \d+/m);
    expect(text).toMatch(/^callhook_outbox_oldest_pending_age_seconds\{sink="jsonl"\} [\d.]+/m);
    expect(text).toMatch(/^callhook_delivery_attempts_total\{sink="crm",outcome="retry"\} [1-9]/m);
    expect(text).not.toContain('crm-token-0123456789');
  });
});
