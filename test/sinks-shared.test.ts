import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SinkView } from '../src/admin/sinks.js';
import { runCallhook } from './helpers/cli.js';
import { storesUnderTest } from './helpers/database.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  closedPort,
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
 * What every sink shares (docs/reference.md#what-every-sink-shares), end to end against a local receiver: `rate`, a 429
 * that pauses the whole sink, `paused` in the config, pause and resume kept in the store across a restart (both
 * stores), the figures of GET /admin/sinks with the why of a sink that is down, `callhook sinks`, and the two metrics.
 */

const sinkOf = async (server: TestServer, name: string) =>
  (await adminApi<{ sinks: SinkView[] }>(server, '/sinks')).body.sinks.find((s) => s.name === name)!;
type Delivery = { sink: string; state: string; attempts: number };
const deliveriesOf = async (server: TestServer, sink: string) =>
  (await adminApi<{ deliveries: Delivery[] }>(server, `/deliveries?sink=${sink}&limit=500`)).body.deliveries;
const postCalls = async (server: TestServer, n: number) => {
  for (let i = 0; i < n; i++) expect((await post(server.url, sampleCall())).status).toBe(200);
};
/** How many of `times` fall in the busiest window of `ms` that opens at one of them. */
const busiest = (times: readonly number[], ms: number) =>
  Math.max(...times.map((from) => times.filter((t) => t >= from && t < from + ms).length));

/** A receiver that records when each request arrived, answering as `answer` says. */
async function timedReceiver(
  answer: (n: number) => [number, Record<string, string>?] = () => [200],
): Promise<Receiver & { arrivals: number[] }> {
  const arrivals: number[] = [];
  const receiver = await startReceiver((_req, res, n) => {
    arrivals.push(Date.now());
    const [status, headers] = answer(n);
    res.writeHead(status, headers).end(status === 200 ? 'ok' : 'slow down');
  });
  return Object.assign(receiver, { arrivals });
}

describe('rate and 429 (docs/reference.md#what-every-sink-shares)', () => {
  const servers: TestServer[] = [];
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('starts at most `rate.max` deliveries in any window of `rate.per`: counted from the arrivals and from the recorded attempts', async () => {
    const receiver = await timedReceiver();
    receivers.push(receiver);
    const server = await startServer({
      config: {
        sinks: [
          { name: 'crm', type: 'http', url: `${receiver.url}/calls`, concurrency: 8, rate: { max: 3, per: '1s' } },
        ],
      },
    });
    servers.push(server);
    await postCalls(server, 10);
    await until(() => receiver.arrivals.length === 10, { timeoutMs: 20_000 });
    expect(busiest(receiver.arrivals, 1000)).toBe(3);
    const calls = (await adminApi<{ calls: { record: { id: string } }[] }>(server, '/calls?limit=20')).body.calls;
    const starts = await Promise.all(
      calls.map(async (c) =>
        (await adminApi<{ attempts: { startedAt: string }[] }>(server, `/calls/${c.record.id}`)).body.attempts.map(
          (a) => Date.parse(a.startedAt),
        ),
      ),
    );
    expect(starts.flat()).toHaveLength(10);
    expect(busiest(starts.flat(), 1000)).toBe(3);
  });

  it('pauses the whole sink for a 429 until its Retry-After: one attempt recorded with 429, the others spend none, then all are delivered', async () => {
    // 5 s: long enough that a loaded machine still sees the sink held between two polls of the admin API, short of
    // the 30 s the default schedule would wait.
    const receiver = await timedReceiver((n) => (n === 1 ? [429, { 'retry-after': '5' }] : [200]));
    receivers.push(receiver);
    const server = await startServer({
      config: { sinks: [{ name: 'crm', type: 'http', url: `${receiver.url}/calls`, concurrency: 1 }] },
    });
    servers.push(server);
    await postCalls(server, 5);
    await until(async () => (await deliveriesOf(server, 'crm')).some((d) => d.attempts === 1 && d.state === 'pending'));
    const limited = await sinkOf(server, 'crm');
    expect(limited.rate_limited_until).not.toBeNull();
    expect(limited.paused).toBe(false);
    expect(limited.last_error).toBe('HTTP 429: slow down');

    await until(async () => (await deliveriesOf(server, 'crm')).every((d) => d.state === 'done'), {
      timeoutMs: 20_000,
    });
    // The default schedule would wait 30 s: the sink came back after the 5 s it was given, and nothing of it was
    // attempted before then.
    expect(receiver.arrivals).toHaveLength(6);
    expect(receiver.arrivals.slice(1).every((t) => t >= receiver.arrivals[0]! + 5000)).toBe(true);
    expect((await deliveriesOf(server, 'crm')).map((d) => d.attempts).sort()).toEqual([1, 1, 1, 1, 2]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('callhook_sink_rate_limited_total{sink="crm"} 1');
    expect(metrics).toContain('callhook_sink_paused{sink="crm"} 0');
  });
});

describe.each(storesUnderTest(serviceUrl('postgres'), 'callhook_sinks'))(
  'pause and resume on %s (docs/reference.md#what-every-sink-shares)',
  (_, open) => {
    let receiver: Receiver;
    let env: Record<string, string>;
    let drop: () => Promise<void>;
    const servers: TestServer[] = [];
    beforeAll(async () => {
      receiver = await startReceiver();
      const opened = await open();
      env = opened.env;
      drop = opened.drop;
    });
    afterAll(async () => {
      await Promise.all(servers.map((s) => s.close()));
      await receiver.close();
      await drop();
    });
    const serve = async (dataDir: string, config: unknown) => {
      const server = await startServer({ env, dataDir, config });
      servers.push(server);
      return server;
    };

    it('keeps a pause across a restart, over a config that does not pause, and delivers everything once on resume', async () => {
      const dataDir = tempDir();
      const config = { sinks: [{ name: 'crm', type: 'http', url: `${receiver.url}/pause` }] };
      let server = await serve(dataDir, config);
      const cli = { CALLHOOK_DATA_DIR: dataDir, CALLHOOK_API_KEYS: KEY, CALLHOOK_ADMIN_TOKEN: ADMIN, ...env };
      const paused = await runCallhook(['sinks', 'pause', 'crm', '--url', server.url], cli);
      expect(paused).toMatchObject({ code: 0, stdout: 'paused crm: 0 pending\n' });
      await postCalls(server, 3);
      expect(await sinkOf(server, 'crm')).toMatchObject({
        paused: true,
        paused_by: 'operator',
        deliveries: { pending: 3, in_flight: 0, done: 0, dead: 0 },
      });
      expect(await fetch(`${server.url}/metrics`).then((r) => r.text())).toContain(
        'callhook_sink_paused{sink="crm"} 1',
      );
      await server.close();

      server = await serve(dataDir, config);
      // Looks at the outbox go on meanwhile; what counts is that none of them took a delivery.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await sinkOf(server, 'crm')).toMatchObject({ paused: true, deliveries: { pending: 3 } });
      expect((await deliveriesOf(server, 'crm')).map((d) => [d.state, d.attempts])).toEqual(
        Array(3).fill(['pending', 0]),
      );
      expect(receiver.received.filter((r) => r.url === '/pause')).toHaveLength(0);
      const listed = await runCallhook(['sinks', 'list', '--url', server.url], cli);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(
        /^crm\thttp\tpaused \(operator\)\tpending=3 in_flight=0 done=0 dead=0\toldest_pending=[\d.]+s\tlast_success=-\n$/,
      );
      // docs/reference.md#command-line: `sinks list [NAME]`.
      const one = await runCallhook(['sinks', 'list', 'crm', '--url', server.url], cli);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^crm\thttp\tpaused \(operator\)\tpending=3 [^\n]*\n$/);
      const unknown = await runCallhook(['sinks', 'list', 'nope', '--url', server.url], cli);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toBe('callhook: no sink is named nope (sinks: crm)\n');
      const unknownPause = await runCallhook(['sinks', 'pause', 'nope', '--url', server.url], cli);
      expect(unknownPause.stderr).toMatch(
        /^callhook: serve at .* answered 404: Not found: no sink is named nope \(sinks: crm\)\n$/,
      );

      const resumed = await runCallhook(['sinks', 'resume', 'crm', '--url', server.url], cli);
      expect(resumed).toMatchObject({ code: 0, stdout: 'resumed crm: 3 pending\n' });
      await until(async () => (await sinkOf(server, 'crm')).deliveries.done === 3);
      const keys = receiver.received.filter((r) => r.url === '/pause').map((r) => r.headers['idempotency-key']);
      expect(new Set(keys).size).toBe(3);
      expect(keys).toHaveLength(3);
      expect((await sinkOf(server, 'crm')).last_success_at).not.toBeNull();
    });

    it('holds a pause made through one serve for another on the same store, and a resume there reaches it', async () => {
      const config = { sinks: [{ name: 'shared', type: 'http', url: `${receiver.url}/shared` }] };
      // On SQLite both serve one file from one data dir; on PostgreSQL each has its own, as replicas do.
      const first = await serve(tempDir(), config);
      const second = await serve(env.DATABASE_URL ? tempDir() : first.dataDir, config);
      expect((await adminApi<SinkView>(first, '/sinks/shared/pause', { method: 'POST' })).body.paused).toBe(true);
      await postCalls(second, 2);
      expect(await sinkOf(second, 'shared')).toMatchObject({
        paused: true,
        paused_by: 'operator',
        deliveries: { pending: 2 },
      });
      // Both serves look at the outbox meanwhile (each once a second at the least); neither takes a delivery.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await deliveriesOf(second, 'shared')).map((d) => d.attempts)).toEqual([0, 0]);
      await adminApi(first, '/sinks/shared/resume', { method: 'POST' });
      await until(async () => (await sinkOf(second, 'shared')).deliveries.done === 2);
      expect(receiver.received.filter((r) => r.url === '/shared')).toHaveLength(2);
    });

    it('starts a sink paused by `paused: true` unless an operator has resumed it since: the stored state wins', async () => {
      const dataDir = tempDir();
      const config = { sinks: [{ name: 'late', type: 'http', url: `${receiver.url}/late`, paused: true }] };
      let server = await serve(dataDir, config);
      await postCalls(server, 2);
      expect(await sinkOf(server, 'late')).toMatchObject({
        paused: true,
        paused_by: 'config',
        paused_changed_at: null,
        deliveries: { pending: 2 },
      });
      const resumed = await adminApi<SinkView>(server, '/sinks/late/resume', { method: 'POST' });
      expect(resumed).toMatchObject({ status: 200, body: { name: 'late', paused: false, paused_by: 'operator' } });
      await until(async () => (await sinkOf(server, 'late')).deliveries.done === 2);
      await server.close();

      server = await serve(dataDir, config);
      expect(await sinkOf(server, 'late')).toMatchObject({ paused: false, paused_by: 'operator' });
      await postCalls(server, 1);
      await until(async () => (await sinkOf(server, 'late')).deliveries.done === 3);
      expect(receiver.received.filter((r) => r.url === '/late')).toHaveLength(3);
      expect((await adminApi(server, '/sinks/nope/pause', { method: 'POST' })).status).toBe(404);
    });
  },
);

describe('a sink whose service is down (docs/reference.md#queues-and-databases)', () => {
  it('does not stop start-up; GET /admin/sinks says why, and its deliveries retry with that error', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'db-sink.mjs'),
      'export default () => { throw new Error("connect ECONNREFUSED 127.0.0.1:5999"); };\n',
    );
    const port = await closedPort();
    const server = await startServer({
      dataDir: dir,
      config: {
        sinks: [
          { name: 'db', type: 'module', module: './db-sink.mjs', retry: { schedule: ['1h'] } },
          { name: 'hook', type: 'http', url: `http://127.0.0.1:${port}/x`, retry: { schedule: ['1h'] } },
        ],
      },
    });
    try {
      const db = await sinkOf(server, 'db');
      expect(db).toMatchObject({
        type: 'module',
        paused: false,
        last_error: 'connect ECONNREFUSED 127.0.0.1:5999',
        last_success_at: null,
      });
      expect(db.last_error_at).not.toBeNull();
      await postCalls(server, 1);
      await until(
        async () =>
          (await sinkOf(server, 'hook')).last_error !== null && (await deliveriesOf(server, 'db'))[0]?.attempts === 1,
      );
      expect((await sinkOf(server, 'hook')).last_error).toMatch(/^network error: .*ECONNREFUSED/);
      const [delivery] = await deliveriesOf(server, 'db');
      expect(delivery).toMatchObject({ state: 'pending', attempts: 1 });
      expect((await sinkOf(server, 'db')).deliveries).toEqual({ pending: 1, in_flight: 0, done: 0, dead: 0 });
    } finally {
      await server.close();
    }
  });

  it('says why for each queue and database sink whose server is down, before any call has come', async () => {
    const port = await closedPort();
    const server = await startServer({
      config: {
        sinks: [
          { name: 'pg', type: 'postgres', url: `postgres://callhook@127.0.0.1:${port}/calls` },
          { name: 'redis', type: 'redis-stream', url: `redis://127.0.0.1:${port}` },
          { name: 'bus', type: 'nats', servers: `nats://127.0.0.1:${port}`, stream: 'CALLHOOK_DOWN' },
          { name: 'queue', type: 'rabbitmq', url: `amqp://guest:guest@127.0.0.1:${port}`, queue: 'callhook-down' },
        ],
      },
    });
    try {
      const errors = await until(
        async () => {
          const sinks = (await adminApi<{ sinks: SinkView[] }>(server, '/sinks')).body.sinks;
          return sinks.every((s) => s.last_error !== null)
            ? Object.fromEntries(sinks.map((s) => [s.name, s.last_error]))
            : undefined;
        },
        { timeoutMs: 15_000 },
      );
      for (const name of ['pg', 'redis', 'bus', 'queue'])
        expect(errors![name], name).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}`));
      expect((await adminApi<{ calls: unknown[] }>(server, '/calls')).body.calls).toEqual([]);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('callhook sinks pause exits non-zero with one line when no serve answers', async () => {
    const port = await closedPort();
    const { code, stdout, stderr } = await runCallhook(['sinks', 'pause', 'crm', '--url', `http://127.0.0.1:${port}`], {
      CALLHOOK_DATA_DIR: tempDir(),
      CALLHOOK_ADMIN_TOKEN: ADMIN,
    });
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(new RegExp(`^callhook: no callhook serve answers at http://127.0.0.1:${port} .*\\n$`));
  });
});
