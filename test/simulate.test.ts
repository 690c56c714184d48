import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../src/record.js';
import { ENCODINGS, METHODS, type Planned, plan, planRequests } from '../src/simulate/plan.js';
import { simulate } from '../src/simulate/simulate.js';
import type { StoredCall } from '../src/store/admin-queries.js';
import { runCallhook } from './helpers/cli.js';
import { startReceiver } from './helpers/receiver.js';
import { ADMIN, adminApi, KEY, post, startServer, type TestServer, tempDir } from './helpers/server.js';

/** `callhook simulate` plays the sender of spec 6.3 against a real receiver, over real HTTP. */

async function allCalls(server: TestServer): Promise<StoredCall[]> {
  const calls: StoredCall[] = [];
  for (let after = ''; ; ) {
    // Test traffic is listed only when asked for (docs/reference.md#test-traffic).
    const res = await fetch(`${server.url}/admin/calls?test_calls=true&limit=500${after && `&after=${after}`}`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    const page = (await res.json()) as { calls: StoredCall[]; next: string | null };
    calls.push(...page.calls);
    if (!page.next) return calls;
    after = page.next;
  }
}

describe('callhook simulate against a running receiver', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.close());

  it('ends with every call stored once, and a summary that matches the store', async () => {
    const options = {
      count: 400,
      duplicates: 0.2,
      empty: 0.2,
      encodings: ENCODINGS,
      methods: METHODS,
      seed: 7,
      today: '2026-11-22',
      query: { assistant: 'priya' },
    };
    const summary = await simulate({ ...options, url: server.url, key: KEY, rate: 400 });
    expect(summary.failures).toBe(0);
    expect(summary.by_status).toEqual({ 200: 400 });
    expect(Object.keys(summary.by_method).sort()).toEqual(['DELETE', 'GET', 'POST', 'PUT']);
    expect(Object.keys(summary.by_encoding).sort()).toEqual(['form', 'json', 'multipart', 'query']);
    expect(summary.duplicates_sent).toBeGreaterThan(40);

    const stored = await allCalls(server);
    expect(stored).toHaveLength(summary.calls);
    const planned = new Set(plan(options).map((p) => p.callId));
    expect(new Set(stored.map((c) => c.record.extra.call_id))).toEqual(planned);
    expect(summary.by_reply.accepted! + summary.by_reply.held!).toBe(stored.length);
    expect(summary.by_reply.duplicate).toBe(summary.duplicates_sent);
    expect(stored.reduce((n, c) => n + c.duplicates, 0)).toBe(summary.duplicates_sent);
    // "" for what the AI could not find: some required fields went missing, and no "" was stored as a value.
    expect(stored.some((c) => c.record.problems.some((p) => p.code === 'missing_required'))).toBe(true);
    expect(stored.every((c) => Object.values(c.record.data).every((v) => v !== ''))).toBe(true);
    // The configured query parameter came along with every request.
    expect(stored.every((c) => c.raw.query.assistant === 'priya')).toBe(true);
    // docs/reference.md#normalising: test traffic says so, and can be filtered out with `when`; the calls list leaves
    // it out unless asked.
    expect(new Set(stored.map((c) => c.record.source))).toEqual(new Set(['simulate']));
    expect((await adminApi(server, '/calls?limit=500')).body.calls).toEqual([]);
    // Spec 6.3 rule 3, as the receiver saw it: GET and DELETE came with no body, their fields in the query.
    const bodyless = stored.filter((c) => c.raw.method === 'GET' || c.raw.method === 'DELETE');
    expect(bodyless.length).toBeGreaterThan(0);
    expect(bodyless.every((c) => c.raw.body === '' && c.raw.query.call_id === c.record.extra.call_id)).toBe(true);
    expect(new Set(stored.map((c) => c.raw.content_type?.split(';')[0]))).toEqual(
      new Set([undefined, 'application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']),
    );
  });

  it('prints the summary as JSON from the command line', async () => {
    const { code, stdout } = await runCallhook(
      [
        'simulate',
        '--count',
        '20',
        '--rate',
        '200',
        '--json',
        '--url',
        `${server.url}/webhooks/end-of-call`,
        '--key',
        KEY,
      ],
      { CALLHOOK_DATA_DIR: server.dataDir },
    );
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ sent: 20, failures: 0, by_status: { 200: 20 } });
    expect(summary.latency_ms.p99).toBeGreaterThanOrEqual(summary.latency_ms.p50);
  });

  it('refuses a bad option with one line', async () => {
    const share = await runCallhook(['simulate', '--duplicates', '2', '--url', server.url], {
      CALLHOOK_DATA_DIR: server.dataDir,
    });
    expect(share.code).toBe(2);
    expect(share.stderr.trim()).toBe('callhook: --duplicates must be a number from 0 to 1, not 2');
    const encoding = await runCallhook(['simulate', '--encoding', 'xml', '--url', server.url], {
      CALLHOOK_DATA_DIR: server.dataDir,
    });
    expect(encoding.code).toBe(2);
    expect(encoding.stderr.trim()).toBe('callhook: --encoding must be one of json, form, multipart or mixed, not xml');
  });

  it('serialises bodies as a configured Content-Type asks, multipart with the boundary it writes', async () => {
    const args = ['simulate', '--count', '6', '--rate', '200', '--duplicates', '0', '--url', server.url, '--key', KEY];
    const env = { CALLHOOK_DATA_DIR: server.dataDir };
    const multipart = await runCallhook([...args, '--json', '--header', 'Content-Type: multipart/form-data'], env);
    expect(multipart.code).toBe(0);
    expect(JSON.parse(multipart.stdout)).toMatchObject({
      sent: 6,
      failures: 0,
      by_status: { 200: 6 },
      by_encoding: { multipart: 6 },
    });
    const form = await runCallhook(
      [...args, '--json', '--header', 'content-type: application/x-www-form-urlencoded'],
      env,
    );
    expect(JSON.parse(form.stdout)).toMatchObject({ failures: 0, by_encoding: { form: 6 } });

    const clash = await runCallhook(
      [...args, '--encoding', 'json', '--header', 'Content-Type: multipart/form-data'],
      env,
    );
    expect(clash.code).toBe(2);
    expect(clash.stderr.trim()).toBe(
      'callhook: --encoding json contradicts the Content-Type header, which asks for multipart',
    );
    const unknown = await runCallhook([...args, '--header', 'Content-Type: text/plain'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toMatch(
      /^callhook: --header Content-Type: the sender serialises .* \(spec 6\.3\), not text\/plain$/,
    );
  });

  it('exits 1 with the failures listed when a reply is not 2xx', async () => {
    // No duplicates, so three requests are three calls whatever the random seed.
    const err = await runCallhook(
      ['simulate', '--count', '3', '--rate', '100', '--duplicates', '0', '--url', server.url, '--key', 'not-the-key'],
      { CALLHOOK_DATA_DIR: server.dataDir },
    );
    expect(err.code).toBe(1);
    expect(err.stdout).toMatch(/^sent 3 requests for 3 calls \(0 duplicates\)/);
    expect(err.stdout).toContain('replies by status: 401 3');
    expect(err.stdout).toMatch(/failed \(lost calls, as the sender records them\): 3\n {2}sim-\S+: 401 \{"error":401/);
  });
});

describe('test traffic kept out of a sink with when', () => {
  it('sends a sink filtered on source only the real calls, never what simulate sent', async () => {
    const dataDir = tempDir();
    const server = await startServer({
      dataDir,
      config: {
        sinks: [
          { name: 'all', type: 'jsonl', path: join(dataDir, 'all.jsonl') },
          { name: 'crm', type: 'jsonl', path: join(dataDir, 'crm.jsonl'), when: { field: 'source', ne: 'simulate' } },
        ],
      },
    });
    try {
      const summary = await simulate({
        count: 10,
        duplicates: 0,
        empty: 0,
        encodings: ['json'],
        methods: ['POST'],
        seed: 3,
        url: server.url,
        key: KEY,
        rate: 100,
      });
      expect(summary.by_status).toEqual({ 200: 10 });
      const real = await post(server.url, { call_id: 'real-1', first_name: 'Asha' });
      expect(real.status).toBe(200);
      const lines = async (file: string) =>
        (await readFile(join(server.dataDir, file), 'utf8').catch(() => ''))
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as CallRecord);
      await expect.poll(async () => (await lines('all.jsonl')).length, { timeout: 10_000 }).toBe(11);
      await expect.poll(async () => (await lines('crm.jsonl')).length, { timeout: 10_000 }).toBe(1);
      expect((await lines('crm.jsonl'))[0]).toMatchObject({ source: 'webhook', extra: { call_id: 'real-1' } });
      expect((await lines('all.jsonl')).filter((r) => r.source === 'simulate')).toHaveLength(10);
    } finally {
      await server.close();
    }
  });
});

describe('the requests simulate plans', () => {
  const requests = plan({
    count: 2000,
    duplicates: 0.1,
    empty: 0.25,
    encodings: ENCODINGS,
    methods: METHODS,
    seed: 11,
    today: '2026-11-22',
  });

  it('sends GET and DELETE with no body, every field in the query string', () => {
    for (const r of requests.filter((p) => p.method === 'GET' || p.method === 'DELETE')) {
      expect(r.fixture.request.body).toBeUndefined();
      expect(r.fixture.request.query).toMatchObject({ call_id: r.callId });
      expect(Object.keys(r.fixture.request.query)).toContain('phone_number');
    }
    for (const r of requests.filter((p) => p.method === 'POST' || p.method === 'PUT')) {
      expect(ENCODINGS).toContain(r.encoding);
      expect(r.fixture.request.body).toMatchObject({ call_id: r.callId });
    }
  });

  it('sends "" at about the chosen rate, and never for the call id', () => {
    const values = requests.flatMap((r) =>
      Object.entries(r.fixture.request.body ?? r.fixture.request.query)
        .filter(([k]) => k !== 'call_id')
        .map(([, v]) => v),
    );
    const share = values.filter((v) => v === '').length / values.length;
    // Some fields are "" by their nature too (no order, no quantity): the share is at least the rate.
    expect(share).toBeGreaterThan(0.22);
    expect(share).toBeLessThan(0.4);
    expect(requests.every((r) => r.callId.startsWith('sim-'))).toBe(true);
  });

  it('repeats earlier calls exactly, at about the chosen rate', () => {
    const repeats = requests.length - new Set(requests.map((r) => r.callId)).size;
    expect(repeats / requests.length).toBeGreaterThan(0.07);
    expect(repeats / requests.length).toBeLessThan(0.13);
    // A repeat is marked, and sends the very request of the call's first send.
    const first = new Map(requests.filter((r) => !r.repeat).map((r) => [r.callId, r.fixture]));
    expect(requests.filter((r) => r.repeat)).toHaveLength(repeats);
    for (const r of requests.filter((p) => p.repeat)) expect(r.fixture).toBe(first.get(r.callId));
  });

  it('plans a long run as it goes: millions of calls cost no more memory than the calls in flight', () => {
    const endless = planRequests({
      count: 1e12,
      duplicates: 0.5,
      empty: 0,
      encodings: ['json'],
      methods: ['POST'],
      seed: 5,
      today: '2026-11-22',
    });
    // Far past the window of sends that repeats are drawn from, a repeat is still of a call already sent.
    const seen = new Set<string>();
    for (let i = 0; i < 30_000; i++) {
      const next = endless.next().value as Planned;
      expect(seen.has(next.callId)).toBe(next.repeat);
      seen.add(next.callId);
    }
  });

  it('is the same run for the same seed, and another for another', () => {
    const again = plan({
      count: 2000,
      duplicates: 0.1,
      empty: 0.25,
      encodings: ENCODINGS,
      methods: METHODS,
      seed: 11,
      today: '2026-11-22',
    });
    expect(again).toEqual(requests);
    expect(
      plan({ count: 5, duplicates: 0, empty: 0, encodings: ['json'], methods: ['POST'], seed: 12 })[0]!.callId,
    ).not.toBe(requests[0]!.callId);
  });
});

describe('simulate records failures as the sender would', () => {
  it('one attempt each: a non-2xx is a failure with its status and body, a late reply a time-out', async () => {
    const receiver = await startReceiver((_req, res, n) => {
      if (n % 2 === 0) return; // never answers
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":500,"message":"boom"}');
    });
    try {
      const summary = await simulate({
        url: receiver.url,
        key: KEY,
        count: 6,
        rate: 100,
        duplicates: 0,
        empty: 0,
        encodings: ['json'],
        methods: ['POST'],
        seed: 3,
        timeoutMs: 300,
      });
      expect(receiver.received).toHaveLength(6);
      expect(summary.by_status).toEqual({ 500: 3, timeout: 3 });
      expect(summary.failures).toBe(6);
      expect(summary.failed).toContainEqual(
        expect.objectContaining({ status: 500, body: '{"error":500,"message":"boom"}' }),
      );
      expect(summary.failed).toContainEqual(
        expect.objectContaining({ status: 'timeout', body: 'no reply within 300 ms' }),
      );
    } finally {
      await receiver.close();
    }
  });
});
