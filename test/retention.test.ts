import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesUnderTest } from './helpers/database.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  type ChildServer,
  KEY,
  post,
  sampleCall,
  spawnServer,
  tempDir,
  until as untilWithin,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * The rules here run on real durations of seconds: a full suite on two loaded cores stretches them, so each wait allows
 * 30 s (it returns as soon as its condition holds).
 */
const until: typeof untilWithin = (probe, options = {}) => untilWithin(probe, { ...options, timeoutMs: 30_000 });

/**
 * docs/reference.md#retention, end to end in a real `serve` on each store, with short durations: old calls deleted but
 * a held call and one still owed to a sink; refused requests deleted and receipts' bodies dropped; a field removed
 * from data, extra, the edits and the raw request of the calls that stay, the rest of them kept; raw requests dropped
 * last; each pass's counts logged. On SQLite, the removed text is in neither the database file nor its WAL.
 */

const stores = storesUnderTest(serviceUrl('postgres'), 'callhook_retention');
const SUMMARY = 'Ordered two kettles, retention-marker';

describe.each(stores)('retention on %s', (name, open) => {
  let server: ChildServer;
  let sink: Receiver;
  let drop: () => Promise<void>;
  const dataDir = tempDir();

  beforeAll(async () => {
    // Every delivery refused with a wait of an hour: the call stays owed.
    sink = await startReceiver((_req, res) => res.writeHead(503).end('down'));
    const opened = await open();
    drop = opened.drop;
    const config = {
      sinks: [
        { name: 'jsonl', type: 'jsonl' },
        { name: 'slow', type: 'http', url: sink.url, retry: { schedule: ['1h'] } },
      ],
      hooks: {
        'end-of-call': { sinks: ['jsonl'] },
        held: { on_problem: 'hold', sinks: ['jsonl'] },
        // call_summary is not declared here: it lands in `extra`.
        owed: {
          sinks: ['slow'],
          parameters: [{ identifier: 'first_name', type: 'string', required: true }],
          dedup: ['call_id'],
        },
      },
      retention: { calls: '2s', receipts: '1s', fields: { call_summary: '3s' }, raw: '6s', every: '250ms' },
    };
    const configPath = join(dataDir, 'callhook.json');
    writeFileSync(configPath, JSON.stringify(config));
    server = await spawnServer(dataDir, { ...opened.env, CALLHOOK_CONFIG: configPath, LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await sink?.close();
    await drop?.();
  });

  const call = async (id: string) => adminApi(server, `/calls/${id}`);
  /** The held call, once the test that makes it has. */
  let heldId: string | undefined;

  it('says what is kept how long at start-up', async () => {
    // The banner goes on after the line that says the server listens.
    await until(() => server.output().includes('retention:'));
    expect(server.output()).toContain('retention: calls kept 2s; raw requests 6s; receipts 1s; field call_summary 3s');
  });

  it('removes what each rule says when it says it, and keeps what it must', { timeout: 120_000 }, async () => {
    const delivered = (await (await post(server.url, sampleCall({ call_summary: SUMMARY }))).json()) as { id: string };
    // A held call, as a form body: phone_number is required and missing.
    const heldBody = new URLSearchParams({ ...(sampleCall({ call_summary: SUMMARY }) as Record<string, string>) });
    heldBody.delete('phone_number');
    const heldReply = await fetch(`${server.url}/webhooks/held?source=campaign`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: heldBody.toString(),
    });
    const held = (await heldReply.json()) as { id: string; status: string };
    expect(held.status).toBe('held');
    heldId = held.id;
    const owedCall = sampleCall({ call_summary: SUMMARY });
    const owed = (await (await post(server.url, owedCall, { hook: 'owed' })).json()) as { id: string };
    expect((await (await post(server.url, owedCall, { hook: 'owed' })).json()) as object).toMatchObject({
      status: 'duplicate',
    });
    const refused = await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: `{"call_summary": "${SUMMARY}"`,
    });
    expect(refused.status).toBe(400);
    const edit = await adminApi(server, `/calls/${held.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ data: { call_summary: `${SUMMARY}, edited` } }),
    });
    expect(edit.status).toBe(200);

    // receipts: 1s. The refused request goes; the duplicate's body is dropped.
    await until(async () => (await adminApi(server, '/receipts?outcome=rejected')).body.receipts.length === 0, {
      timeoutMs: 10_000,
    });
    const duplicate = await until(async () =>
      (await call(owed.id)).body.receipts.find(
        (r: { outcome: string; rawBody?: string }) => r.outcome === 'duplicate' && r.rawBody === undefined,
      ),
    );
    expect(duplicate.query).toBeNull();

    // calls: 2s. The delivered call goes; the held one and the owed one stay.
    await until(async () => (await call(delivered.id)).status === 404, { timeoutMs: 10_000 });
    expect((await call(held.id)).status).toBe(200);
    expect((await call(owed.id)).body.deliveries).toMatchObject([{ sink: 'slow', state: 'pending' }]);

    // fields.call_summary: 3s. Gone from data, extra, the edits and the raw requests; the rest stays.
    const heldNow = await until(async () => {
      const { body } = await call(held.id);
      return body.record.data.call_summary === undefined ? body : undefined;
    });
    expect(heldNow.record.data).toMatchObject({ first_name: 'Asha', call_outcome: 'order placed' });
    expect(heldNow.status).toBe('held');
    expect(heldNow.edits).toMatchObject([{ revision: 2, fields: { call_summary: { removed: 'retention' } } }]);
    expect(heldNow.raw.body).toContain('first_name=Asha');
    expect(heldNow.raw.body).not.toContain('call_summary');
    expect(heldNow.raw.query).toEqual({ source: 'campaign' });
    expect(heldNow.raw.retention).toEqual({ fields: ['call_summary'] });
    const owedNow = await until(async () => {
      const { body } = await call(owed.id);
      return body.record.extra.call_summary === undefined ? body : undefined;
    });
    expect(owedNow.record.extra).toMatchObject({ last_name: 'Verma' });
    expect(JSON.parse(owedNow.raw.body)).toMatchObject({ first_name: 'Asha', last_name: 'Verma' });
    expect(JSON.stringify([heldNow, owedNow])).not.toContain('kettles');
    if (name === 'sqlite') {
      // Overwritten, not only unlinked: once the pass that removed it has ended with its truncating checkpoint, the
      // database file and its WAL hold the text nowhere.
      const holding = () =>
        ['callhook.db', 'callhook.db-wal'].filter((file) => {
          try {
            return readFileSync(join(dataDir, file)).includes('retention-marker');
          } catch {
            return false;
          }
        });
      await until(() => holding().length === 0).catch(() => undefined);
      expect(holding()).toEqual([]);
    }

    // raw: 6s. The raw requests of the calls that stay keep their method and content type, and say why.
    const dropped = await until(
      async () => {
        const { body } = await call(held.id);
        return body.raw.retention?.dropped === undefined ? undefined : body.raw;
      },
      { timeoutMs: 10_000 },
    );
    expect(dropped).toMatchObject({
      method: 'POST',
      content_type: 'application/x-www-form-urlencoded',
      query: {},
      body: '',
      retention: { fields: ['call_summary'] },
    });

    // What each pass removed is in the log, and adds up to what was removed (the owed call's raw request may go in
    // the same pass as the held one's, logged when the pass ends).
    const passes = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes('"retention":{'))
        .map((line) => (JSON.parse(line) as { retention: Record<string, number | Record<string, number>> }).retention);
    const total = (kind: string) => passes().reduce((n, p) => n + ((p[kind] as number) ?? 0), 0);
    await until(() => total('raw') === 2);
    expect(total('calls')).toBe(1);
    expect(total('refused')).toBe(1);
    expect(total('bodies')).toBe(1);
    expect(passes().reduce((n, p) => n + ((p.fields as Record<string, number>).call_summary ?? 0), 0)).toBe(2);
  });

  it("shows on the overview what is kept how long, and on a call's page what the retention removed", async () => {
    const login = await fetch(`${server.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = async (path: string) => (await fetch(`${server.url}${path}`, { headers: { cookie } })).text();
    expect(await page('/ui')).toContain('calls kept 2s; raw requests 6s; receipts 1s; field call_summary 3s.');
    const callPage = await page(`/ui/calls/${heldId}`);
    expect(callPage).toContain('Body and query dropped by retention');
    expect(callPage).toContain(
      'Removed by retention from this call (data, extra, edits, request, receipts): call_summary.',
    );
    expect(callPage).toContain('removed by retention');
  });
});
