import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  jsonlRecords,
  KEY,
  post,
  readStoreFile,
  sampleCall,
  spawnServer,
  spawnStarting,
  tempDir,
  until,
} from './helpers/server.js';

/** The receiver as its own process: what a 200 promises survives SIGKILL, and SIGTERM drains and exits 0. */

const jsonlIds = (dataDir: string): string[] => jsonlRecords(dataDir).map((r) => r.id);

async function sendCalls(url: string, count: number, prefix: string): Promise<string[]> {
  const replies = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      post(url, sampleCall({ call_id: `${prefix}-${i}` })).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      })),
    ),
  );
  expect(replies.every((r) => r.status === 200 && r.body.status === 'accepted')).toBe(true);
  return replies.map((r) => r.body.id as string);
}

describe('a killed receiver', () => {
  it('loses nothing it acknowledged: after SIGKILL and a restart every call is stored and reaches the JSONL file once', async () => {
    const dataDir = tempDir();
    const first = await spawnServer(dataDir);
    const acknowledged = await sendCalls(first.url, 200, 'kill');
    first.child.kill('SIGKILL');
    expect(await first.exited).toBeNull();

    const stored = new Set(
      readStoreFile(dataDir, (db) => db.prepare('SELECT id FROM calls').pluck().all() as string[]),
    );
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);

    const second = await spawnServer(dataDir);
    try {
      await until(() => acknowledged.every((id) => jsonlIds(dataDir).includes(id)), { timeoutMs: 20_000 });
      const lines = jsonlIds(dataDir);
      expect(lines.length).toBe(new Set(lines).size);
      expect(new Set(lines)).toEqual(new Set(acknowledged));
      const again = await post(second.url, sampleCall({ call_id: 'kill-0' }));
      expect(await again.json()).toMatchObject({ status: 'duplicate', id: acknowledged[0] });
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

describe('SIGTERM', () => {
  it('stops intake, delivers what was accepted and exits 0', async () => {
    const dataDir = tempDir();
    const server = await spawnServer(dataDir);
    const acknowledged = await sendCalls(server.url, 50, 'term');
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const { waiting, inFlight } = readStoreFile(dataDir, (db) => ({
      waiting: db
        .prepare(`SELECT call_id FROM deliveries WHERE sink = 'jsonl' AND state = 'pending'`)
        .pluck()
        .all() as string[],
      inFlight: db.prepare(`SELECT COUNT(*) FROM deliveries WHERE state = 'in_flight'`).pluck().get(),
    }));
    expect(inFlight).toBe(0);
    // A delivery not made before exit is left pending, never half done, and the next start resumes it.
    const delivered = new Set(jsonlIds(dataDir));
    expect(acknowledged.filter((id) => !delivered.has(id)).sort()).toEqual(waiting.sort());
    expect(server.output()).toContain('SIGTERM received, draining');
  });

  it('during start-up lets the start finish, then drains and exits 0', async () => {
    const dataDir = tempDir();
    // A sink that takes a while to open holds start-up at a known point, before the listener is up.
    const module = join(dataDir, 'slow-to-open.mjs');
    writeFileSync(
      module,
      `export default async () => { process.stderr.write('opening the sink\\n'); await new Promise((r) => setTimeout(r, 1500)); return { deliver() {} }; };\n`,
    );
    const config = join(dataDir, 'callhook.json');
    writeFileSync(config, JSON.stringify({ sinks: [{ name: 'slow', type: 'module', module }] }));
    const server = spawnStarting(dataDir, { CALLHOOK_CONFIG: config });
    await until(() => server.output().includes('opening the sink'), { timeoutMs: 20_000 });
    server.child.kill('SIGTERM');
    expect(await server.exited, server.output()).toBe(0);
    expect(server.output()).toContain('SIGTERM received, draining');
  });
});

describe('logs', () => {
  it('are pino JSON with a request id, and never carry the Authorization header or a key', async () => {
    const dataDir = tempDir();
    const server = await spawnServer(dataDir, { LOG_LEVEL: 'trace' });
    await sendCalls(server.url, 3, 'logs');
    await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: 'Bearer not-the-key-0123456789' },
      body: '{}',
    });
    await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{broken',
    });
    await fetch(`${server.url}/admin/calls`, { headers: { authorization: `Bearer ${ADMIN}` } });
    server.child.kill('SIGTERM');
    await server.exited;
    const output = server.output();
    for (const secret of [KEY, ADMIN, 'not-the-key-0123456789']) expect(output).not.toContain(secret);
    expect(output.toLowerCase()).not.toContain('authorization');
    const requests = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'request');
    expect(requests.length).toBeGreaterThanOrEqual(6);
    for (const line of requests)
      expect(line).toMatchObject({
        level: expect.any(Number),
        reqId: expect.any(String),
        method: expect.any(String),
        status: expect.any(Number),
      });
    expect(requests.filter((l) => l.outcome === 'accepted')).toHaveLength(3);
  });
});

describe('a receiver killed while deliveries are pending and in flight', () => {
  it('after a restart delivers every record to every sink whose filter matches', async () => {
    const slow = await startReceiver(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 150));
      res.writeHead(200).end('ok');
    });
    const dataDir = tempDir();
    const configPath = join(dataDir, 'callhook.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          {
            name: 'orders',
            type: 'http',
            url: slow.url,
            concurrency: 2,
            when: { field: 'call_outcome', eq: 'order placed' },
          },
        ],
      }),
    );
    try {
      const first = await spawnServer(dataDir, { CALLHOOK_CONFIG: configPath });
      const outcomes = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 'order placed' : 'not interested'));
      const replies = await Promise.all(
        outcomes.map((call_outcome, i) =>
          post(first.url, sampleCall({ call_id: `inflight-${i}`, call_outcome })).then((r) => r.json()),
        ),
      );
      const orders = replies.filter((_, i) => outcomes[i] === 'order placed').map((r) => r.id as string);
      await until(() => slow.received.length >= 3);
      first.child.kill('SIGKILL');
      await first.exited;
      const before = new Set(slow.received.map((r) => JSON.parse(r.body).id));
      expect(before.size).toBeLessThan(orders.length);

      const second = await spawnServer(dataDir, { CALLHOOK_CONFIG: configPath });
      try {
        await until(() => orders.every((id) => slow.received.some((r) => JSON.parse(r.body).id === id)), {
          timeoutMs: 20_000,
        });
        await until(() => replies.every((r) => jsonlIds(dataDir).includes(r.id)), { timeoutMs: 20_000 });
        const delivered = new Set(slow.received.map((r) => JSON.parse(r.body).id));
        expect([...delivered].sort()).toEqual([...orders].sort());
        expect(jsonlIds(dataDir).length).toBe(replies.length);
        // At least once: a delivery cut off by the kill may arrive twice, always with the same idempotency key.
        for (const r of slow.received) expect(r.headers['idempotency-key']).toBe(`${JSON.parse(r.body).id}:orders`);
        console.log(
          `killed with ${before.size} of ${orders.length} order deliveries made; after restart ${delivered.size} distinct, ${slow.received.length} requests in all`,
        );
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    } finally {
      await slow.close();
    }
  });
});

describe('two receivers on one data dir, as in a rolling restart', () => {
  it("the second leaves the first one's deliveries in flight to it; once both are gone the next takes them back at once", async () => {
    let hold = true;
    const held: (() => void)[] = [];
    const crm = await startReceiver(async (_req, res) => {
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      res.writeHead(200).end('ok');
    });
    const dataDir = tempDir();
    const configPath = join(dataDir, 'callhook.json');
    writeFileSync(configPath, JSON.stringify({ sinks: [{ name: 'crm', type: 'http', url: crm.url }] }));
    const env = { CALLHOOK_CONFIG: configPath, LOG_LEVEL: 'info' };
    const inFlight = () =>
      readStoreFile(dataDir, (db) => db.prepare(`SELECT state, attempts FROM deliveries ORDER BY id`).all());
    try {
      const first = await spawnServer(dataDir, env);
      const ids = await sendCalls(first.url, 3, 'rolling');
      await until(() => crm.received.length === 3);

      const second = await spawnServer(dataDir, env);
      expect(second.output()).toContain('another callhook serve is running on this database file');
      expect(inFlight()).toEqual(ids.map(() => ({ state: 'in_flight', attempts: 1 })));
      first.child.kill('SIGKILL');
      await first.exited;
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      hold = false;
      for (const release of held) release();

      // Their leases last a minute: delivered within seconds, they were taken back at start-up.
      const third = await spawnServer(dataDir, env);
      try {
        await until(() => crm.received.length === 6, { timeoutMs: 20_000 });
        expect(
          crm.received
            .slice(3)
            .map((r) => JSON.parse(r.body).id)
            .sort(),
        ).toEqual([...ids].sort());
        expect(third.output()).toContain('resumed deliveries left in flight by the previous run');
        expect(third.output()).not.toContain('another callhook serve');
      } finally {
        third.child.kill('SIGTERM');
        await third.exited;
      }
    } finally {
      hold = false;
      for (const release of held) release();
      await crm.close();
    }
  });
});
