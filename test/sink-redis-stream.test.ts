import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, post, readStoreFile, sampleCall, spawnServer, startServer, tempDir, until, type TestServer } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

/**
 * The redis-stream sink end to end (contract section 9): a real receiver delivering to the machine's Redis, each
 * test on a stream of its own. A delivery made again (a redeliver, a retry after a kill -9 whose reply never came)
 * leaves one entry; a Redis that is away for a while gets every call once it is back.
 */

const url = serviceUrl('redis');
const prefix = `callhook-e2e:${randomBytes(6).toString('hex')}`;
let redis: Redis;
let n = 0;
const streamName = () => `${prefix}:${++n}`;

/** The entries of a stream as field objects, in stream order. */
async function entries(stream: string): Promise<Record<string, string>[]> {
  return (await redis.xrange(stream, '-', '+')).map(([, flat]) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]!]] : []))));
}

/** The sink's deliveries by state, read from the data dir's database as another process would. */
function states(dataDir: string): Record<string, number> {
  return readStoreFile(dataDir, (db) => Object.fromEntries((db.prepare(`SELECT state, COUNT(*) AS n FROM deliveries GROUP BY state`).all() as { state: string; n: number }[]).map((r) => [r.state, r.n])));
}

async function admin(server: { url: string }, path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${server.url}/admin${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } });
  return res.json();
}

describe.skipIf(!url)('the redis-stream sink end to end', () => {
  beforeAll(() => {
    redis = new Redis(url!);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('adds a call as one entry in the record shape, and a redelivered call adds nothing', async () => {
    const stream = streamName();
    const server: TestServer = await startServer({ config: { sinks: [{ name: 'events', type: 'redis-stream', url, stream }] } });
    try {
      const { id } = await (await post(server.url, sampleCall({ call_id: 'redis-e2e-1' }))).json();
      const done = async (attempts: number) => {
        const detail = await admin(server, `/calls/${id}`);
        return detail.deliveries[0]?.state === 'done' && detail.attempts.length === attempts ? detail : undefined;
      };
      const detail = await until(() => done(1));
      const [entry, ...more] = await entries(stream);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({ id, hook: 'end-of-call', revision: '1', idempotency_key: `${id}:events` });
      expect(JSON.parse(entry!.record!)).toEqual(detail.record);

      expect(await admin(server, `/calls/${id}/redeliver`, { method: 'POST', body: '{}' })).toMatchObject({ scheduled: 1 });
      const again = await until(() => done(2));
      expect(again.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['ok', 'ok']);
      expect(await entries(stream)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('delivers every call once after Redis was away for a while', async () => {
    const proxy = await startTcpProxy(url!, 6379);
    const stream = streamName();
    const retry = { attempts: 100, schedule: ['100ms'], jitter: 0 };
    const server = await startServer({ config: { sinks: [{ name: 'events', type: 'redis-stream', url: proxy.url(url!), stream, retry }] } });
    try {
      await proxy.down();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await (await post(server.url, sampleCall({ call_id: `redis-away-${i}` }))).json()).id);
      // Every call has met the outage at least once before Redis comes back.
      await until(() => readStoreFile(server.dataDir, (db) => db.prepare(`SELECT COUNT(DISTINCT delivery_id) FROM attempts WHERE outcome = 'retry'`).pluck().get() === 10));
      const failed = (await admin(server, `/calls/${ids[0]}`)).attempts[0];
      expect(failed.error).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED`));
      await proxy.up();
      await until(() => states(server.dataDir).done === 10, { timeoutMs: 20_000 });
      expect((await entries(stream)).map((e) => e.id).sort()).toEqual([...ids].sort());
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  it('leaves one entry per call when the receiver is killed with deliveries whose replies never came', { timeout: 60_000 }, async () => {
    const proxy = await replyHoldingProxy(new URL(url!));
    const stream = streamName();
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    const concurrency = 16;
    writeFileSync(config, JSON.stringify({ sinks: [{ name: 'events', type: 'redis-stream', url: `redis://127.0.0.1:${proxy.port}`, stream, concurrency }] }));
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    try {
      const first = await spawnServer(dataDir, env);
      await post(first.url, sampleCall({ call_id: 'redis-kill-warm' }));
      await until(async () => (await redis.xlen(stream)) === 1); // connected, script loaded
      // From here Redis runs every script but its replies never reach the receiver: each delivery is in flight.
      proxy.holdReplies();
      const calls = 40;
      for (let i = 0; i < calls; i++) expect((await post(first.url, sampleCall({ call_id: `redis-kill-${i}` }))).status).toBe(200);
      await until(async () => (await redis.xlen(stream)) === 1 + concurrency);
      first.child.kill('SIGKILL');
      await first.exited;
      expect(states(dataDir).done).toBe(1);

      proxy.passReplies();
      const second = await spawnServer(dataDir, env);
      await until(() => states(dataDir).done === 1 + calls, { timeoutMs: 30_000 });
      second.child.kill('SIGTERM');
      await second.exited;
      const keys = (await entries(stream)).map((e) => e.idempotency_key);
      // Without the marker, the 16 deliveries in flight at the kill would each be in the stream twice.
      expect(keys).toHaveLength(1 + calls);
      expect(new Set(keys).size).toBe(1 + calls);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * A proxy in front of Redis that can swallow Redis's replies: the commands still reach Redis and run, but the
 * receiver never learns that they did, as when a process dies between a write and its record.
 */
async function replyHoldingProxy(target: URL): Promise<{ port: number; holdReplies(): void; passReplies(): void; close(): Promise<void> }> {
  let holding = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk) => holding || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    holdReplies: () => (holding = true),
    passReplies: () => (holding = false),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
