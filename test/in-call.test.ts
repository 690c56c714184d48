import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ADMIN,
  jsonlRecords,
  KEY,
  post,
  readStoreFile,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
} from './helpers/server.js';

/** `kind: in-call` hooks answer the AI mid-conversation from the store, and store nothing but a receipt. */

const lookup = (
  server: TestServer,
  hook: string,
  init: { method?: string; body?: string; type?: string; query?: string; key?: string } = {},
) =>
  fetch(`${server.url}/webhooks/${hook}${init.query ? `?${init.query}` : ''}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${init.key ?? KEY}`, ...(init.type && { 'content-type': init.type }) },
    body: init.body,
  });

const admin = async (server: TestServer, path: string) =>
  (await fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json() as Promise<{
    calls: unknown[];
  }>;

describe('an in-call hook without a handler', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { hooks: { 'end-of-call': {}, 'caller-lookup': { kind: 'in-call' } } } });
    // Three calls from one caller, written three ways, and one from someone else.
    const calls = [
      sampleCall({
        phone_number: '09812345678',
        order_id: 'ORD-1',
        call_outcome: 'order placed',
        call_date: '2026-11-01',
        call_summary: 'Ordered a kettle.',
      }),
      sampleCall({
        phone_number: '+91 98123 45678',
        order_id: 'ORD-2',
        call_outcome: 'order placed',
        call_date: '2026-11-10',
        call_summary: 'Ordered a fan.',
      }),
      sampleCall({
        phone_number: '98123-45678',
        order_id: 'ORD-1',
        call_outcome: 'Order cancelled',
        call_date: '2026-11-20',
        sentiment_analysis: 'negative',
        call_summary: 'Cancelled the kettle.',
      }),
      sampleCall({ phone_number: '9876543210', order_id: 'ORD-9', call_outcome: 'order placed' }),
    ];
    for (const call of calls) expect((await post(server.url, call)).status).toBe(200);
  });
  afterAll(() => server?.close());

  const expected = {
    phone_number: '+919812345678',
    count: 3,
    last_call_date: '2026-11-20',
    last_outcome: 'Order cancelled',
    last_sentiment: 'Negative',
    last_summary: 'Cancelled the kettle.',
    // ORD-1's newest call cancelled it; ORD-2 is still open.
    open_order_ids: ['ORD-2'],
  };

  it("answers the caller's history for a JSON body, the number in a local format", async () => {
    const res = await lookup(server, 'caller-lookup', {
      body: JSON.stringify({ phone_number: '098123 45678' }),
      type: 'application/json',
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject(expected);
    expect(body.calls.map((c: { call_date: string }) => c.call_date)).toEqual([
      '2026-11-20',
      '2026-11-10',
      '2026-11-01',
    ]);
    expect(body).not.toHaveProperty('problems');
  });

  it('answers the same for a form body and for a GET with the query string', async () => {
    const form = await lookup(server, 'caller-lookup', {
      body: 'phone_number=%2B919812345678',
      type: 'application/x-www-form-urlencoded',
    });
    expect(await form.json()).toMatchObject(expected);
    const get = await lookup(server, 'caller-lookup', { method: 'GET', query: 'phone_number=9812345678' });
    expect(await get.json()).toMatchObject(expected);
  });

  it('answers count 0 for a caller it has never heard from, and lists the problems of a missing number', async () => {
    const unknown = await (
      await lookup(server, 'caller-lookup', { method: 'GET', query: 'phone_number=9000000001' })
    ).json();
    expect(unknown).toEqual({
      phone_number: '+919000000001',
      count: 0,
      last_call_date: null,
      last_outcome: null,
      last_sentiment: null,
      last_summary: null,
      open_order_ids: [],
      calls: [],
    });
    const missing = await lookup(server, 'caller-lookup', { method: 'GET', query: 'phone_number=' });
    expect(missing.status).toBe(200);
    expect(await missing.json()).toMatchObject({
      phone_number: null,
      count: 0,
      problems: [{ field: 'phone_number', code: 'missing_required' }],
    });
    const invalid = await lookup(server, 'caller-lookup', {
      body: JSON.stringify({ phone_number: 'call me maybe' }),
      type: 'application/json',
    });
    expect(invalid.status).toBe(200);
    expect(await invalid.json()).toMatchObject({
      phone_number: null,
      count: 0,
      calls: [],
      problems: [{ field: 'phone_number', code: 'invalid_format' }],
    });
  });

  it('refuses a wrong key like any hook', async () => {
    const res = await lookup(server, 'caller-lookup', {
      method: 'GET',
      query: 'phone_number=9812345678',
      key: 'wrong-key-0123456789abc',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: 401,
      message: 'Missing or invalid bearer key in the Authorization header',
    });
  });

  it('stores no call and delivers nothing, but keeps a receipt', async () => {
    const before = (await admin(server, '/calls?limit=500')).calls.length;
    // The four end-of-call calls are delivered first, so a line written later could only come from the lookup.
    await vi.waitFor(() => expect(jsonlRecords(server.dataDir)).toHaveLength(4), { timeout: 3000 });
    await lookup(server, 'caller-lookup', {
      body: JSON.stringify({ phone_number: '9812345678', call_id: 'in-call-1' }),
      type: 'application/json',
    });
    expect((await admin(server, '/calls?limit=500')).calls).toHaveLength(before);
    await new Promise((r) => setTimeout(r, 300));
    expect(jsonlRecords(server.dataDir)).toHaveLength(4);
    expect(jsonlRecords(server.dataDir).some((r) => r.hook === 'caller-lookup')).toBe(false);
    const receipts = readStoreFile(server.dataDir, (db) =>
      db
        .prepare(
          "SELECT method, status, call_id AS callId FROM receipts WHERE hook = 'caller-lookup' AND outcome = 'in-call'",
        )
        .all(),
    );
    // One per lookup of this file so far, each with no call.
    expect(receipts.length).toBeGreaterThanOrEqual(6);
    expect(receipts).toContainEqual({ method: 'POST', status: 200, callId: null });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/hook="caller-lookup",outcome="in-call"/);
  });
});

describe('the admin OpenAPI document', () => {
  it('describes the in-call reply and its 502 and 504 on every webhook hook', async () => {
    const server = await startServer({ config: { hooks: { 'end-of-call': {}, lookup: { kind: 'in-call' } } } });
    try {
      const doc = (await (
        await fetch(`${server.url}/admin/openapi.json`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).json()) as {
        paths: Record<string, Record<string, unknown>>;
        components: { schemas: Record<string, { required?: string[] }> };
      };
      const post = Object.entries(doc.paths).find(([path]) => path.startsWith('/webhooks/'))?.[1].post as
        | { parameters: { schema: { enum: string[] } }[]; responses: Record<string, unknown> }
        | undefined;
      expect(post?.parameters[0]?.schema.enum).toContain('lookup');
      expect(Object.keys(post?.responses ?? {})).toEqual(expect.arrayContaining(['200', '502', '504']));
      expect(doc.components.schemas.CallerHistory?.required).toContain('open_order_ids');
      expect(doc.components.schemas.HistoryCall?.required).toContain('order_id');
    } finally {
      await server.close();
    }
  });
});

describe('an in-call hook with a handler', () => {
  let server: TestServer;
  beforeAll(async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'greet.mjs'),
      `export default async ({ data, history }) => ({ say: \`Welcome back, \${history.count} calls\`, phone: data.phone_number, open: history.open_order_ids });\n`,
    );
    writeFileSync(
      join(dir, 'broken.mjs'),
      `export default () => { throw new Error('database password hunter2 rejected'); };\n`,
    );
    // The slow handler leaves a mark when its signal is aborted, so the test sees the time-out reach it.
    writeFileSync(
      join(dir, 'slow.mjs'),
      `import { readFileSync, writeFileSync } from 'node:fs';\nexport default (_req, { signal }) => new Promise((resolve) => { const t = setTimeout(() => resolve({ late: true }), 5000); signal.addEventListener('abort', () => { clearTimeout(t); writeFileSync(${JSON.stringify(join(dir, 'aborted'))}, String(signal.reason)); }); });\n`,
    );
    server = await startServer({
      dataDir: dir,
      config: {
        hooks: {
          'end-of-call': {},
          greet: { kind: 'in-call', handler: './greet.mjs' },
          broken: { kind: 'in-call', handler: './broken.mjs' },
          slow: { kind: 'in-call', handler: './slow.mjs', handler_timeout: '200ms' },
        },
      },
    });
    await post(server.url, sampleCall({ phone_number: '9812345678', order_id: 'ORD-5' }));
  });
  afterAll(() => server?.close());
  const abortMark = () => join(server.dataDir, 'aborted');

  it("returns the handler's JSON, which sees the history", async () => {
    const res = await lookup(server, 'greet', { method: 'GET', query: 'phone_number=09812345678' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ say: 'Welcome back, 1 calls', phone: '+919812345678', open: ['ORD-5'] });
  });

  it('answers 502 with the Error object when the handler throws, without its message', async () => {
    const res = await lookup(server, 'broken', { method: 'GET', query: 'phone_number=9812345678' });
    expect(res.status).toBe(502);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ error: 502, message: 'The in-call handler failed' });
    expect(body).not.toContain('hunter2');
  });

  it('answers 504 when the handler is late', async () => {
    const started = Date.now();
    const res = await lookup(server, 'slow', { method: 'GET', query: 'phone_number=9812345678' });
    expect(res.status).toBe(504);
    expect(await res.json()).toEqual({
      error: 504,
      message: 'The in-call handler did not answer in time: no answer within 200 ms',
    });
    const took = Date.now() - started;
    // Bounds that prove the time-out, not its speed: not before 200 ms, and long before the handler's own 5 s.
    expect(took).toBeGreaterThanOrEqual(190);
    expect(took).toBeLessThan(4500);
    expect(readFileSync(abortMark(), 'utf8')).toMatch(/no answer within 200 ms/);
  });
});

describe('in-call hook configuration', () => {
  const refused = async (hooks: Record<string, unknown>) => {
    const err = await startServer({ config: { hooks } }).then(
      async (s) => (await s.close(), undefined),
      (e: Error) => e,
    );
    return err?.message;
  };

  it('refuses what only an end-of-call hook has, and the reverse, naming the key', async () => {
    expect(await refused({ lookup: { kind: 'in-call', sinks: ['log'] } })).toBe(
      'hooks.lookup.sinks: an in-call hook stores nothing, so it has no sinks',
    );
    expect(await refused({ lookup: { kind: 'in-call', dedup: ['order_id'] } })).toBe(
      'hooks.lookup.dedup: an in-call hook stores nothing, so it has no dedup',
    );
    expect(await refused({ 'end-of-call': { handler: './x.mjs' } })).toBe(
      'hooks.end-of-call.handler: only an in-call hook has a handler',
    );
  });

  it('refuses a handler module that cannot be loaded or exports no function', async () => {
    expect(await refused({ lookup: { kind: 'in-call', handler: './missing.mjs' } })).toMatch(
      /^hooks\.lookup\.handler: cannot load .*missing\.mjs/,
    );
    const dir = tempDir();
    writeFileSync(join(dir, 'nothing.mjs'), 'export const x = 1;\n');
    const err = await startServer({
      dataDir: dir,
      config: { hooks: { lookup: { kind: 'in-call', handler: './nothing.mjs' } } },
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^hooks\.lookup\.handler: .*nothing\.mjs has no default export that is a function/);
  });
});
