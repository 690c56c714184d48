import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCallhook } from './helpers/cli.js';
import { freshDatabase, storesUnderTest } from './helpers/database.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  KEY,
  post,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * A person's access and erasure end to end (docs/reference.md#access, #erasure), on each store: their calls sent in
 * every encoding and many spellings of their number, a duplicate, an edit, a refused request, deliveries pending,
 * dead and done; another person's calls beside them. `people show` finds all of it; `erase` removes all of it, and
 * a scan of every file under the data directory as bytes then finds none of the person's spellings, name or address,
 * while it still finds the other person's (the scan is real).
 */

const ASHA = {
  spellings: ['+919812345678', '+91 98123 45678', '98123 45678', '98123-45678', '9812345678', '098123 45678'],
  name: 'Ashalata',
  email: 'ashalata.v@example.in',
};
const RAVI = { number: '+919988776655', name: 'Ravindran', email: 'ravindran@example.in' };

/** Every file under `dir` that holds any of `needles`, with the first it holds. */
function filesHolding(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const bytes = readFileSync(path);
        const hit = needles.find((needle) => bytes.includes(Buffer.from(needle)));
        if (hit !== undefined) found.push(`${name}: ${hit}`);
      }
    }
  };
  walk(dir);
  return found;
}

const postgresUrl = serviceUrl('postgres');
const redisUrl = serviceUrl('redis');

const form = (fields: Record<string, string>) => new URLSearchParams(fields);

describe.each(storesUnderTest(postgresUrl, 'callhook_erase'))('a person’s data on %s', (kind, open) => {
  let server: TestServer;
  let crm: Receiver;
  let broken: Receiver;
  let slow: Receiver;
  let drop: () => Promise<void>;
  let warehouse: Awaited<ReturnType<typeof freshDatabase>>;
  let redis: Redis;
  const stream = `callhook-erase:${randomBytes(5).toString('hex')}`;
  let env: Record<string, string>;
  let databaseUrl: string | undefined;
  const ids: { asha: string[]; ravi: string[] } = { asha: [], ravi: [] };

  const cli = (args: string[]) => runCallhook([...args, '--url', server.url], env);
  const send = (body: RequestInit['body'], contentType?: string) =>
    fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, ...(contentType ? { 'content-type': contentType } : {}) },
      body,
    });

  beforeAll(async () => {
    crm = await startReceiver((_req, res) => res.writeHead(200).end());
    warehouse = await freshDatabase(postgresUrl!, 'callhook_erase_sink');
    redis = new Redis(redisUrl!);
    broken = await startReceiver((_req, res) => res.writeHead(400).end('no'));
    slow = await startReceiver((_req, res) => res.writeHead(503).end());
    const store = await open();
    drop = store.drop;
    databaseUrl = store.env.DATABASE_URL;
    const dataDir = tempDir();
    server = await startServer({
      dataDir,
      env: store.env,
      config: {
        sinks: [
          { name: 'file', type: 'jsonl' },
          { name: 'crm', type: 'http', url: `${crm.url}/leads` },
          { name: 'broken', type: 'http', url: `${broken.url}/x`, retry: { attempts: 1 } },
          { name: 'slow', type: 'http', url: `${slow.url}/x`, retry: { attempts: 5, schedule: ['1h'], jitter: 0 } },
          { name: 'warehouse', type: 'postgres', url: warehouse.url },
          { name: 'stream', type: 'redis-stream', url: redisUrl, stream },
        ],
      },
    });
    env = {
      CALLHOOK_DATA_DIR: dataDir,
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
      CALLHOOK_CONFIG: join(dataDir, 'config.json'),
      ...store.env,
    };

    const asha = (spelling: string, overrides: Record<string, unknown> = {}) =>
      sampleCall({ first_name: ASHA.name, phone_number: spelling, email_address: ASHA.email, ...overrides });
    // JSON, form, multipart and a GET's query, each with another spelling of the number.
    const replies = [
      await post(server.url, asha(ASHA.spellings[1]!, { call_id: 'asha-1' })),
      await send(form(asha(ASHA.spellings[3]!, { call_id: 'asha-2' }) as Record<string, string>)),
      await (async () => {
        const body = new FormData();
        for (const [k, v] of Object.entries(asha(ASHA.spellings[4]!, { call_id: 'asha-3' }))) body.set(k, String(v));
        return send(body);
      })(),
      await fetch(
        `${server.url}/webhooks/end-of-call?${form(asha(ASHA.spellings[5]!, { call_id: 'asha-4' }) as Record<string, string>)}`,
        { headers: { authorization: `Bearer ${KEY}` } },
      ),
      // A duplicate of the first, its body kept on its receipt.
      await post(server.url, asha('+91-98123-45678', { call_id: 'asha-1' })),
    ];
    for (const reply of replies) expect(reply.status).toBe(200);
    const bodies = await Promise.all(replies.map((r) => r.json()));
    ids.asha = [...new Set(bodies.map((b: any) => b.id as string))];
    expect(ids.asha).toHaveLength(4);
    // A refused request: a body cut short, kept whole on its receipt.
    expect(
      (await send(`{"phone_number":"${ASHA.spellings[2]}","first_name":"${ASHA.name}"`, 'application/json')).status,
    ).toBe(400);
    // An edit: the name as it was is kept in the edit history.
    const edited = await adminApi(server, `/calls/${ids.asha[0]}`, {
      method: 'PATCH',
      body: JSON.stringify({ data: { call_outcome: 'callback' } }),
    });
    expect(edited.status).toBe(200);

    for (const i of [1, 2]) {
      const reply = await post(
        server.url,
        sampleCall({
          call_id: `ravi-${i}`,
          first_name: RAVI.name,
          phone_number: RAVI.number,
          email_address: RAVI.email,
        }),
      );
      ids.ravi.push(((await reply.json()) as any).id);
    }
    // Every call delivered to the file and the CRM, dead at `broken`, pending at `slow`.
    await until(async () => {
      const { body } = await adminApi(server, '/sinks');
      const of = (name: string) => body.sinks.find((s: any) => s.name === name).deliveries;
      return (
        of('file').done === 6 &&
        of('crm').done === 6 &&
        of('warehouse').done === 6 &&
        of('stream').done === 6 &&
        of('broken').dead === 6 &&
        of('slow').pending === 6
      );
    });
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all([crm?.close(), broken?.close(), slow?.close()]);
    await redis?.del(stream, ...(await redis.keys(`${stream}:*`)));
    redis?.disconnect();
    await warehouse?.drop();
    await drop?.();
  });

  it('shows everything kept about the person, found by any spelling of the number, and by the address', async () => {
    const { stdout, code } = await cli(['people', 'show', '--phone', '098123-45678']);
    expect(code).toBe(0);
    const document = JSON.parse(stdout);
    expect(document.person).toEqual({ phone: '+919812345678' });
    expect(document.calls.map((c: any) => c.record.id).sort()).toEqual([...ids.asha].sort());
    const first = document.calls.find((c: any) => c.record.id === ids.asha[0]);
    expect(first.receipts).toHaveLength(2); // the first request and its duplicate
    expect(first.edits).toHaveLength(1);
    expect(first.deliveries.map((d: any) => [d.sink, d.state]).sort()).toEqual([
      ['broken', 'dead'],
      ['crm', 'done'],
      ['file', 'done'],
      ['slow', 'pending'],
      ['stream', 'done'],
      ['warehouse', 'done'],
    ]);
    expect(document.receipts).toHaveLength(1);
    expect(document.receipts[0]).toMatchObject({ outcome: 'rejected', status: 400 });
    expect(document.receipts[0].rawBody).toContain(ASHA.spellings[2]);

    const byEmail = await adminApi(server, `/people?email=${encodeURIComponent(` ${ASHA.email.toUpperCase()} `)}`);
    expect(byEmail.body.calls.map((c: any) => c.record.id).sort()).toEqual([...ids.asha].sort());
    expect(JSON.stringify(byEmail.body)).not.toContain(RAVI.name);
  });

  it('counts in a dry run what it would erase, and erases nothing', async () => {
    const { stdout, code } = await cli(['erase', '--phone', '+91 98123 45678', '--dry-run', '--json']);
    expect(code).toBe(0);
    const reply = JSON.parse(stdout);
    expect(reply).toMatchObject({ dry_run: true, nothing_kept: false, erased: { calls: 4, receipts: 6, edits: 1 } });
    expect((await adminApi(server, '/people?phone=9812345678')).body.calls).toHaveLength(4);
  });

  it('erases every trace of the person, lists the sinks that cannot erase, and leaves the other person whole', async () => {
    const { stdout, stderr, code } = await cli(['erase', '--phone', '0091 98123-45678', '--json']);
    expect(code, stdout + stderr).toBe(0);
    const reply = JSON.parse(stdout);
    expect(reply).toMatchObject({
      dry_run: false,
      erased: { calls: 4, receipts: 6, edits: 1, deliveries: 24 },
    });
    const sinks = Object.fromEntries(reply.sinks.map((s: any) => [s.sink, s]));
    expect(sinks.file).toMatchObject({ type: 'jsonl', erased: 4 });
    expect(sinks.warehouse).toMatchObject({ type: 'postgres', erased: 4 });
    expect(sinks.stream).toMatchObject({ type: 'redis-stream', erased: 4 });
    // Downstream, the other person's copies stay.
    const rows = new pg.Client({ connectionString: warehouse.url });
    await rows.connect();
    try {
      const { rows: left } = await rows.query('SELECT id FROM callhook_calls ORDER BY id');
      expect(left.map((r) => r.id)).toEqual([...ids.ravi].sort());
    } finally {
      await rows.end();
    }
    const entries = await redis.xrange(stream, '-', '+');
    expect(entries.map(([, fields]) => fields[fields.indexOf('id') + 1]).sort()).toEqual([...ids.ravi].sort());
    expect(JSON.stringify(entries)).not.toContain(ASHA.name);
    expect(sinks.crm).toMatchObject({ type: 'http', erased: null });
    expect(sinks.crm.record_ids.sort()).toEqual([...ids.asha].sort());
    // A dead or cancelled delivery gave the sink nothing.
    expect(sinks.broken).toBeUndefined();
    expect(sinks.slow).toBeUndefined();

    expect((await adminApi(server, '/people?phone=9812345678')).body).toMatchObject({ nothing_kept: true });
    const other = await adminApi(server, `/people?phone=${encodeURIComponent(RAVI.number)}`);
    expect(other.body.calls.map((c: any) => c.record.id).sort()).toEqual([...ids.ravi].sort());

    const needles = [...ASHA.spellings, ASHA.name, ASHA.email];
    if (kind === 'sqlite') {
      expect(filesHolding(server.dataDir, needles)).toEqual([]);
      // The scan finds what is there: the other person, in the database and the file.
      expect(filesHolding(server.dataDir, [RAVI.name]).length).toBeGreaterThanOrEqual(2);
    } else {
      expect(filesHolding(server.dataDir, needles)).toEqual([]);
      expect(filesHolding(server.dataDir, [RAVI.name])).toEqual(['calls.jsonl: Ravindran']);
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        for (const table of ['calls', 'receipts', 'call_edits', 'erasures', 'meta']) {
          const { rows } = await client.query(`SELECT t::text AS row FROM ${table} t`);
          const text = rows.map((r) => r.row).join('\n');
          for (const needle of needles) expect(text, `${table}: ${needle}`).not.toContain(needle);
        }
      } finally {
        await client.end();
      }
    }
  });

  it('keeps in the log when the person was erased and by whom, and not who they are', async () => {
    const { stdout, code } = await cli(['erase', '--check', '--phone', '9812345678']);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^erased at .* by admin-token: calls 4, receipts 6, edits 1, deliveries 24, attempts \d+\n$/,
    );
    expect((await cli(['erase', '--check', '--phone', RAVI.number])).stdout).toBe(
      'no erasure of this person is recorded\n',
    );
    // A second erasure finds nothing, and says so.
    const again = await cli(['erase', '--phone', '9812345678']);
    expect(again.stdout).toBe('nothing is kept about this person: nothing erased\n');
  });

  it('refuses a request that names no one, both, or what cannot be read, erasing nothing', async () => {
    for (const [args, why] of [
      [[], /give the person/],
      [['--phone', '12'], /cannot be read as a phone number/],
      [['--phone', RAVI.number, '--email', RAVI.email], /not both/],
      [['--email', 'ravi at example'], /not an e-mail address/],
    ] as const) {
      const { code, stderr } = await cli(['erase', ...args]);
      expect(code).not.toBe(0);
      expect(stderr).toMatch(why);
    }
    const body = await adminApi(server, '/erase', { method: 'POST', body: '{}' });
    expect(body.status).toBe(400);
    expect((await adminApi(server, `/people?phone=${encodeURIComponent(RAVI.number)}`)).body.calls).toHaveLength(2);
  });
});

describe('an erasure while calls keep arriving', () => {
  it('loses none of them, in the store or the jsonl file, and leaves none of the person', async () => {
    const server = await startServer({ config: { sinks: [{ name: 'file', type: 'jsonl' }] } });
    try {
      for (let i = 0; i < 50; i++)
        expect(
          (
            await post(
              server.url,
              sampleCall({ call_id: `asha-${i}`, first_name: ASHA.name, phone_number: ASHA.spellings[i % 6] }),
            )
          ).status,
        ).toBe(200);
      await until(async () => (await adminApi(server, '/sinks')).body.sinks[0].deliveries.done === 50);

      const arrived: string[] = [];
      let sending = true;
      const senders = Array.from({ length: 8 }, async (_, lane) => {
        for (let i = 0; sending || i < 20; i++) {
          const reply = await post(
            server.url,
            sampleCall({
              call_id: `other-${lane}-${i}`,
              first_name: 'Other',
              phone_number: `+9199000${lane}${String(i).padStart(4, '0')}`,
            }),
          );
          expect(reply.status).toBe(200);
          arrived.push(((await reply.json()) as any).id);
        }
      });
      await new Promise((r) => setTimeout(r, 100));
      const erased = await adminApi(server, '/erase', {
        method: 'POST',
        body: JSON.stringify({ phone: '9812345678' }),
      });
      sending = false;
      await Promise.all(senders);
      expect(erased.body.erased.calls).toBe(50);
      expect(erased.body.sinks).toEqual([expect.objectContaining({ sink: 'file', erased: 50 })]);

      await until(async () => (await adminApi(server, '/sinks')).body.sinks[0].deliveries.done === arrived.length);
      const lines = readFileSync(join(server.dataDir, 'calls.jsonl'), 'utf8').trim().split('\n');
      const ids = lines.map((line) => JSON.parse(line).id as string);
      expect(ids.sort()).toEqual([...arrived].sort()); // each exactly once
      const stored = await adminApi(server, '/calls?limit=500');
      expect(stored.body.calls).toHaveLength(arrived.length);
      expect(filesHolding(server.dataDir, [ASHA.name, ...ASHA.spellings])).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
