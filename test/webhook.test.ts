import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  jsonlRecords,
  KEY,
  OTHER_KEY,
  post,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';

/** The receiving side end to end over real HTTP: docs/reference.md#receiving, every reply and every failure row. */

let server: TestServer;
const hook = (path = 'end-of-call') => `${server.url}/webhooks/${path}`;
const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });
const db = () => new Database(join(server.dataDir, 'callhook.db'), { readonly: true });
const jsonlLines = () => jsonlRecords(server.dataDir);

beforeAll(async () => {
  server = await startServer({ env: { CALLHOOK_API_KEYS: `${KEY},${OTHER_KEY}` } });
});
afterAll(() => server.close());

describe('accepted calls', () => {
  it('answers 200 accepted with the record id, the dedup key and no problems, and writes one JSONL line', async () => {
    const call = sampleCall({ call_id: 'accept-1', extra_note: 'VIP' });
    const res = await post(server.url, call);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const reply = await res.json();
    expect(reply).toEqual({ status: 'accepted', id: expect.any(String), dedup_key: 'call_id:accept-1', problems: [] });

    const line = await until(() => jsonlLines().find((r) => r.id === reply.id));
    expect(line).toEqual({
      id: reply.id,
      hook: 'end-of-call',
      dedup_key: 'call_id:accept-1',
      received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      source: 'webhook',
      revision: 1,
      data: {
        first_name: 'Asha',
        last_name: 'Verma',
        phone_number: '+919812345678',
        call_date: '2026-11-21',
        call_duration: 184,
        sentiment_analysis: 'Positive',
        call_outcome: 'order placed',
        call_summary: 'Ordered two kettles.',
      },
      extra: { call_id: 'accept-1', extra_note: 'VIP' },
      problems: [],
    });
  });

  it('accepts every key of a rotation and the scheme in any case', async () => {
    for (const [scheme, key] of [
      ['Bearer', KEY],
      ['bearer', OTHER_KEY],
      ['BEARER', KEY],
    ] as const) {
      const res = await fetch(hook(), {
        method: 'POST',
        headers: { authorization: `${scheme} ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(sampleCall()),
      });
      expect(res.status).toBe(200);
    }
  });

  it('reads GET and DELETE parameters from the query string only', async () => {
    for (const method of ['GET', 'DELETE']) {
      const query = new URLSearchParams({ call_id: `q-${method}`, first_name: 'Ravi', call_duration: '61' });
      const res = await fetch(`${hook()}?${query}`, { method, headers: auth() });
      const reply = await res.json();
      expect(res.status).toBe(200);
      expect(reply.status).toBe('accepted');
      const call = (await (
        await fetch(`${server.url}/admin/calls/${reply.id}`, { headers: auth(ADMIN) })
      ).json()) as any;
      expect(call.record.data).toMatchObject({ first_name: 'Ravi', call_duration: 61 });
      expect(call.raw).toMatchObject({
        method,
        query: { call_id: `q-${method}`, first_name: 'Ravi', call_duration: '61' },
      });
    }
  });

  it('lets the body win over the query on POST and keeps both in raw', async () => {
    const res = await fetch(`${hook()}?first_name=Query&pincode=560001`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'call_id=mix-1&first_name=Body',
    });
    const reply = await res.json();
    const call = (await (await fetch(`${server.url}/admin/calls/${reply.id}`, { headers: auth(ADMIN) })).json()) as any;
    expect(call.record.data).toMatchObject({ first_name: 'Body', pincode: '560001' });
    expect(call.raw).toEqual({
      method: 'POST',
      content_type: 'application/x-www-form-urlencoded',
      query: { first_name: 'Query', pincode: '560001' },
      body: 'call_id=mix-1&first_name=Body',
    });
  });

  it('lists problems but still accepts and delivers when on_problem is deliver', async () => {
    const res = await post(
      server.url,
      sampleCall({ call_id: 'prob-1', call_outcome: '', phone_number: '12', call_duration: 'long' }),
    );
    const reply = await res.json();
    expect(reply.status).toBe('accepted');
    expect(reply.problems.map((p: { field: string; code: string }) => `${p.field}:${p.code}`)).toEqual([
      'phone_number:invalid_format',
      'call_duration:invalid_type',
      'call_outcome:missing_required',
    ]);
    await until(() => jsonlLines().some((r) => r.id === reply.id));
  });
});

describe('duplicates', () => {
  it('answers 200 duplicate with the first id, counts it, and delivers once; other content under the key is another call', async () => {
    const call = sampleCall({ call_id: 'dup-1' });
    const first = await (await post(server.url, call)).json();
    const again = await post(server.url, call);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'duplicate', id: first.id, dedup_key: 'call_id:dup-1' });
    await post(server.url, call);
    const row = db().prepare('SELECT duplicates FROM calls WHERE id = ?').get(first.id) as { duplicates: number };
    expect(row.duplicates).toBe(2);
    // docs/reference.md#deduplication: the same key with other content is a conflict, kept and delivered as a call of
    // its own.
    const other = await (await post(server.url, { ...call, first_name: 'Other' })).json();
    expect(other).toMatchObject({
      status: 'accepted',
      conflicts_with: first.id,
      dedup_key: expect.stringMatching(/^sha256:/),
    });
    await until(() => jsonlLines().some((r) => r.id === first.id) && jsonlLines().some((r) => r.id === other.id));
    expect(jsonlLines().filter((r) => r.dedup_key === 'call_id:dup-1')).toHaveLength(1);
  });

  it('falls back to recording_url, then to a hash of the data, and never to order_id', async () => {
    const byRecording = await (
      await post(server.url, sampleCall({ call_id: '', order_id: 'ORD-1', recording_url: 'https://rec.example/a.mp3' }))
    ).json();
    expect(byRecording.dedup_key).toBe('recording_url:https://rec.example/a.mp3');
    const byOrder = await (await post(server.url, sampleCall({ call_id: '', order_id: 'ORD-1' }))).json();
    expect(byOrder.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    const { call_id: _, ...noIds } = sampleCall({ first_name: 'Hashed' });
    const byHash = await (await post(server.url, noIds)).json();
    expect(byHash.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    const same = await (await post(server.url, noIds)).json();
    expect(same).toMatchObject({ status: 'duplicate', id: byHash.id });
  });

  it('gives twenty concurrent copies of one call one accepted, nineteen duplicates and one JSONL line', async () => {
    const call = sampleCall({ call_id: 'burst-1' });
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(server.url, call).then((r) => r.json())));
    expect(replies.filter((r) => r.status === 'accepted')).toHaveLength(1);
    expect(replies.filter((r) => r.status === 'duplicate')).toHaveLength(19);
    expect(new Set(replies.map((r) => r.id)).size).toBe(1);
    await until(() => jsonlLines().some((r) => r.id === replies[0].id));
    await new Promise((r) => setTimeout(r, 200));
    expect(jsonlLines().filter((r) => r.dedup_key === 'call_id:burst-1')).toHaveLength(1);
  });
});

describe('failures', () => {
  const expectError = async (res: Response, status: number) => {
    expect(res.status).toBe(status);
    const body = await res.json();
    expect(body).toEqual({ error: status, message: expect.any(String) });
    expect(body.message.length).toBeGreaterThan(5);
    return body;
  };
  const receipts = () => db().prepare('SELECT * FROM receipts ORDER BY id').all() as any[];

  it('refuses a missing, malformed or wrong key with 401 and WWW-Authenticate, storing nothing', async () => {
    const before = receipts().length;
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-key-0000000000000' },
      { authorization: `Basic ${KEY}` },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${KEY}x` },
    ];
    for (const headers of attempts) {
      const res = await fetch(hook(), {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(sampleCall({ call_id: 'unauth' })),
      });
      await expectError(res, 401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect(receipts().length).toBe(before);
    expect(db().prepare(`SELECT COUNT(*) AS n FROM calls WHERE dedup_key = 'call_id:unauth'`).get()).toEqual({ n: 0 });
  });

  it('answers 404 for an unknown hook and 405 with Allow for another method', async () => {
    await expectError(await fetch(hook('nope'), { method: 'POST', headers: auth() }), 404);
    const res = await fetch(hook(), { method: 'PATCH', headers: auth() });
    await expectError(res, 405);
    expect(res.headers.get('allow')).toBe('POST, PUT, GET, DELETE');
  });

  it('answers 400 for broken JSON and keeps the raw bytes as a rejected receipt', async () => {
    const res = await fetch(hook(), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"first_name": "Asha",',
    });
    await expectError(res, 400);
    const last = receipts().at(-1);
    expect(last).toMatchObject({
      outcome: 'rejected',
      status: 400,
      method: 'POST',
      content_type: 'application/json',
      size: 22,
    });
    expect(Buffer.from(last.raw_body).toString()).toBe('{"first_name": "Asha",');
  });

  it('keeps a large broken body whole, byte for byte, in its rejected receipt', async () => {
    const body = `{"summary": "${'é'.repeat(150_000)}"`;
    const res = await fetch(hook(), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body,
    });
    await expectError(res, 400);
    const last = receipts().at(-1);
    expect(last).toMatchObject({ outcome: 'rejected', status: 400, size: Buffer.byteLength(body) });
    expect(Buffer.compare(Buffer.from(last.raw_body), Buffer.from(body))).toBe(0);
  });

  it('answers 400 for invalid UTF-8 and for broken multipart', async () => {
    await expectError(
      await fetch(hook(), {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      }),
      400,
    );
    await expectError(
      await fetch(hook(), {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'multipart/form-data; boundary=xyz' },
        body: '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
      }),
      400,
    );
  });

  it('answers 415 for an unsupported content type and for a file part', async () => {
    await expectError(
      await fetch(hook(), { method: 'POST', headers: { ...auth(), 'content-type': 'text/plain' }, body: 'hello' }),
      415,
    );
    const form = new FormData();
    form.append('call_id', 'file-1');
    form.append('recording', new Blob(['RIFF'], { type: 'audio/wav' }), 'call.wav');
    await expectError(await fetch(hook(), { method: 'POST', headers: auth(), body: form }), 415);
  });

  it('answers 413 for a body over the limit, declared or streamed, and leaves a receipt', async () => {
    const big = JSON.stringify({ call_summary: 'x'.repeat(1024 * 1024) });
    await expectError(
      await fetch(hook(), { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: big }),
      413,
    );
    expect(receipts().at(-1)).toMatchObject({ outcome: 'rejected', status: 413 });
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await fetch(hook(), {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    await expectError(streamed, 413);
  });

  it('answers every unknown route with the Error object', async () => {
    await expectError(await fetch(`${server.url}/nowhere`), 404);
  });
});

describe('health', () => {
  it('is live and ready while the store commits and the worker runs', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready' });
  });
});

describe('generated keys', () => {
  it('generates a key on first start, keeps it with mode 0600, prints it once, and accepts it', async () => {
    const dataDir = tempDir();
    const first = await startServer({ dataDir, env: { CALLHOOK_API_KEYS: '', CALLHOOK_ADMIN_TOKEN: '' } });
    const key = readFileSync(join(dataDir, 'api-keys'), 'utf8').trim();
    expect(statSync(join(dataDir, 'api-keys')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(first.printed.join('\n')).toContain(`Bearer ${key}`);
    expect(first.printed.join('\n')).toContain(`/webhooks/end-of-call`);
    expect((await post(first.url, sampleCall(), { key })).status).toBe(200);
    await first.close();

    const second = await startServer({ dataDir, env: { CALLHOOK_API_KEYS: '', CALLHOOK_ADMIN_TOKEN: '' } });
    expect(second.printed.join('\n')).not.toContain(key);
    expect((await post(second.url, sampleCall(), { key })).status).toBe(200);
    await second.close();
  });
});
