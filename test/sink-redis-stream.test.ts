import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminApi,
  deliveryStates,
  post,
  readStoreFile,
  sampleCall,
  spawnServer,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

/**
 * The redis-stream sink end to end (docs/reference.md#queues-and-databases): a real receiver delivering to the
 * machine's Redis, each test on a stream of its own. A delivery made again (a redeliver, a retry after a kill -9 whose
 * reply never came) leaves one entry; a Redis that is away for a while gets every call once it is back (pausing:
 * sink-pause.test.ts).
 */

const url = serviceUrl('redis');
const prefix = `callhook-e2e:${randomBytes(6).toString('hex')}`;
let redis: Redis;
let n = 0;
const streamName = () => `${prefix}:${++n}`;

/** The entries of a stream as field objects, in stream order. */
async function entries(stream: string): Promise<Record<string, string>[]> {
  return (await redis.xrange(stream, '-', '+')).map(([, flat]) =>
    Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]!]] : []))),
  );
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
    const server: TestServer = await startServer({
      config: { sinks: [{ name: 'events', type: 'redis-stream', url, stream }] },
    });
    try {
      const { id } = await (await post(server.url, sampleCall({ call_id: 'redis-e2e-1' }))).json();
      const done = async (attempts: number) => {
        const detail = (await adminApi(server, `/calls/${id}`)).body;
        return detail.deliveries[0]?.state === 'done' && detail.attempts.length === attempts ? detail : undefined;
      };
      const detail = await until(() => done(1));
      const [entry, ...more] = await entries(stream);
      expect(more).toEqual([]);
      expect(entry).toMatchObject({ id, hook: 'end-of-call', revision: '1', idempotency_key: `${id}:events` });
      expect(JSON.parse(entry!.record!)).toEqual(detail.record);

      expect((await adminApi(server, `/calls/${id}/redeliver`, { method: 'POST', body: '{}' })).body).toMatchObject({
        scheduled: 1,
      });
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
    const server = await startServer({
      config: { sinks: [{ name: 'events', type: 'redis-stream', url: proxy.url(url!), stream, retry }] },
    });
    try {
      await proxy.down();
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await (await post(server.url, sampleCall({ call_id: `redis-away-${i}` }))).json()).id);
      // Every call has met the outage at least once before Redis comes back.
      await until(() =>
        readStoreFile(
          server.dataDir,
          (db) =>
            db.prepare(`SELECT COUNT(DISTINCT delivery_id) FROM attempts WHERE outcome = 'retry'`).pluck().get() === 10,
        ),
      );
      const failed = (await adminApi(server, `/calls/${ids[0]}`)).body.attempts[0];
      expect(failed.error).toMatch(new RegExp(`^Redis at 127\\.0\\.0\\.1:${proxy.port}: .*ECONNREFUSED`));
      await proxy.up();
      await until(() => deliveryStates(server.dataDir).done === 10, { timeoutMs: 20_000 });
      expect((await entries(stream)).map((e) => e.id).sort()).toEqual([...ids].sort());
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  it('leaves one entry per call when the receiver is killed with deliveries whose replies never came', {
    timeout: 60_000,
  }, async () => {
    const proxy = await startTcpProxy(url!, 6379);
    const stream = streamName();
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    const concurrency = 16;
    writeFileSync(
      config,
      JSON.stringify({ sinks: [{ name: 'events', type: 'redis-stream', url: proxy.url(url!), stream, concurrency }] }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    try {
      const first = await spawnServer(dataDir, env);
      await post(first.url, sampleCall({ call_id: 'redis-kill-warm' }));
      await until(async () => (await redis.xlen(stream)) === 1); // connected, script loaded
      // From here Redis runs every script but its replies never reach the receiver: each delivery is in flight.
      proxy.holdReplies();
      const calls = 40;
      for (let i = 0; i < calls; i++)
        expect((await post(first.url, sampleCall({ call_id: `redis-kill-${i}` }))).status).toBe(200);
      await until(async () => (await redis.xlen(stream)) === 1 + concurrency);
      first.child.kill('SIGKILL');
      await first.exited;
      expect(deliveryStates(dataDir).done).toBe(1);

      proxy.passReplies();
      const second = await spawnServer(dataDir, env);
      await until(() => deliveryStates(dataDir).done === 1 + calls, { timeoutMs: 30_000 });
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
