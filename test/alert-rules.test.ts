import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RULE_NAMES } from '../src/alerts/config.js';
import { startFakeService } from './fakes/calling-service.js';
import { runCallhook } from './helpers/cli.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  KEY,
  OTHER_KEY,
  post,
  readStoreFile,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';

/**
 * Every alert rule (docs/reference.md#alerts) opens an incident and resolves it, in a real serve over HTTP with short
 * durations, and tells an `http` channel exactly once each way, signed as the http sink signs; an incident open at a
 * restart is not told again; an alert message that goes dead raises nothing; no message carries a caller's data.
 */

const SIGNING = `whsec_${Buffer.from('alert-rules-signing-secret-0123').toString('base64')}`;

interface Message {
  type: 'incident.opened' | 'incident.resolved';
  incident: {
    id: string;
    rule: string;
    key: string | null;
    opened_at: string;
    resolved_at?: string;
    counts: Record<string, number>;
    summary: string;
  };
}

let channel: Receiver;
let sink: Receiver;
let sinkAnswer = 200;
beforeAll(async () => {
  channel = await startReceiver((_req, res) => res.writeHead(204).end());
  sink = await startReceiver((_req, res) => res.writeHead(sinkAnswer).end());
});
afterAll(async () => {
  await Promise.all([channel.close(), sink.close()]);
});

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  sinkAnswer = 200;
});

/** The messages the channel received about `rule`, checked against their signature. */
function messages(rule?: string): Message[] {
  const wh = new Webhook(SIGNING);
  return channel.received
    .map((r) => {
      const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]));
      return wh.verify(r.body, headers) as Message;
    })
    .filter((m) => rule === undefined || m.incident.rule === rule);
}

/** A serve with one `http` alert channel, the rules given (every other rule off), evaluated every 100 ms. */
async function serveWith(
  rules: Record<string, unknown>,
  more: Record<string, unknown> = {},
  dataDir = tempDir(),
): Promise<TestServer> {
  const off = Object.fromEntries(RULE_NAMES.map((rule) => [rule, false]));
  const server = await startServer({
    dataDir,
    config: {
      auth_limit: { max: 1000 },
      alerts: {
        every: '100ms',
        channels: [{ name: 'ops', type: 'http', url: `${channel.url}/alerts`, signing: { secret: SIGNING } }],
        rules: { ...off, ...rules },
      },
      ...more,
    },
  });
  servers.push(server);
  return server;
}

/** The incidents kept in a serve's SQLite file, newest first, with their messages, as another process reads them. */
const incidents = async (server: TestServer, state?: 'open') =>
  readStoreFile(server.dataDir, (db) =>
    (
      db
        .prepare(`SELECT * FROM incidents ${state === 'open' ? 'WHERE resolved_at IS NULL' : ''} ORDER BY id DESC`)
        .all() as any[]
    ).map((row) => ({
      ...row,
      state: row.resolved_at === null ? 'open' : 'resolved',
      counts: JSON.parse(row.counts),
      messages: db
        .prepare('SELECT channel, kind, state, last_error FROM alert_messages WHERE incident_id = ? ORDER BY id')
        .all(row.id),
    })),
  );

const storedIncidents = (dataDir: string) =>
  readStoreFile(dataDir, (db) => db.prepare('SELECT rule, key, resolved_at FROM incidents ORDER BY id').all());

describe('alert rules', () => {
  it('dead_delivery: opens at the first dead delivery, counts the next, and resolves after `quiet`', async () => {
    channel.received.length = 0;
    sinkAnswer = 400; // a permanent failure: dead at the first attempt
    const server = await serveWith(
      { dead_delivery: { quiet: '1500ms' } },
      { sinks: [{ name: 'crm', type: 'http', url: `${sink.url}/calls`, retry: { attempts: 1 } }] },
    );
    expect((await post(server.url, sampleCall())).status).toBe(200);
    const opened = await until(() => messages('dead_delivery')[0]);
    expect(opened).toMatchObject({ type: 'incident.opened', incident: { key: 'crm', counts: { dead: 1 } } });
    expect((await post(server.url, sampleCall())).status).toBe(200);
    await until(async () => (await incidents(server))[0]?.counts.dead === 2);

    const resolved = await until(() => messages('dead_delivery')[1], { timeoutMs: 15_000 });
    expect(resolved).toMatchObject({
      type: 'incident.resolved',
      incident: { id: opened!.incident.id, key: 'crm', counts: { dead: 2 } },
    });
    expect(messages('dead_delivery')).toHaveLength(2);
    // The channel has the message before the sender records it done: wait for the record (a full run read it between).
    const kept = await until(async () => {
      const [found] = await incidents(server);
      return found?.messages.every((m: any) => m.state !== 'in_flight') ? found : undefined;
    });
    expect(kept).toMatchObject({ state: 'resolved', counts: { dead: 2 } });
    expect(kept.messages.map((m: any) => [m.channel, m.kind, m.state])).toEqual([
      ['ops', 'opened', 'done'],
      ['ops', 'resolved', 'done'],
    ]);
  });

  it('dead_delivery: resolves once every dead delivery is retried and delivered', async () => {
    channel.received.length = 0;
    sinkAnswer = 400;
    const server = await serveWith(
      { dead_delivery: { quiet: '1h' } },
      { sinks: [{ name: 'crm', type: 'http', url: `${sink.url}/calls`, retry: { attempts: 1 } }] },
    );
    await post(server.url, sampleCall());
    await until(() => messages('dead_delivery').length === 1);
    sinkAnswer = 200;
    expect((await adminApi(server, '/deliveries/retry', { method: 'POST', body: '{}' })).body).toEqual({ retried: 1 });
    const resolved = await until(() => messages('dead_delivery')[1]);
    expect(resolved?.type).toBe('incident.resolved');
  });

  it('sink_backlog: opens when the oldest pending delivery is older than `older_than`, resolves once it is gone', async () => {
    channel.received.length = 0;
    sinkAnswer = 503;
    const server = await serveWith(
      { sink_backlog: { older_than: '500ms' } },
      {
        sinks: [
          { name: 'crm', type: 'http', url: `${sink.url}/calls`, retry: { attempts: 5, schedule: ['1h'], jitter: 0 } },
        ],
      },
    );
    await post(server.url, sampleCall());
    const opened = await until(() => messages('sink_backlog')[0]);
    expect(opened).toMatchObject({ type: 'incident.opened', incident: { key: 'crm', counts: { waiting: 1 } } });
    sinkAnswer = 200;
    await adminApi(server, '/deliveries/retry', { method: 'POST', body: '{"state":"pending"}' });
    expect(await until(() => messages('sink_backlog')[1])).toMatchObject({ type: 'incident.resolved' });
  });

  it('auth_failures: opens at `max` wrong keys within `per`, counts the rest, resolves after `quiet`', async () => {
    channel.received.length = 0;
    const server = await serveWith({ auth_failures: { max: 3, per: '1m', after_success: 0, quiet: '1s' } });
    for (let i = 0; i < 2; i++) expect((await post(server.url, sampleCall(), { key: OTHER_KEY })).status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(messages('auth_failures')).toEqual([]);
    await post(server.url, sampleCall(), { key: OTHER_KEY });
    const opened = await until(() => messages('auth_failures')[0]);
    expect(opened!.incident).toMatchObject({ key: 'end-of-call', counts: { refused: 3 } });
    for (let i = 0; i < 3; i++) await post(server.url, sampleCall(), { key: OTHER_KEY });
    const resolved = await until(() => messages('auth_failures')[1], { timeoutMs: 15_000 });
    expect(resolved).toMatchObject({ type: 'incident.resolved', incident: { counts: { refused: 6 } } });
    expect(messages('auth_failures')).toHaveLength(2);
  });

  it('auth_failures: one wrong key soon after an accepted call opens at once (a rotated key)', async () => {
    channel.received.length = 0;
    const server = await serveWith({ auth_failures: { max: 100, after_success: '1h', quiet: '1h' } });
    expect((await post(server.url, sampleCall())).status).toBe(200);
    expect((await post(server.url, sampleCall(), { key: OTHER_KEY })).status).toBe(401);
    const opened = await until(() => messages('auth_failures')[0]);
    expect(opened!.incident.summary).toMatch(/after its last accepted call/);
  });

  it('no_calls: opens when a hook that had calls is quiet for `quiet_for` in its active hours, resolves at a call', async () => {
    channel.received.length = 0;
    const server = await serveWith({ no_calls: { quiet_for: '1s', active_hours: '00:00-24:00' } });
    await new Promise((r) => setTimeout(r, 1500));
    expect(messages('no_calls')).toEqual([]); // a hook that never had a call is not watched yet
    await post(server.url, sampleCall());
    const opened = await until(() => messages('no_calls')[0]);
    expect(opened!.incident.key).toBe('end-of-call');
    await post(server.url, sampleCall());
    expect(await until(() => messages('no_calls')[1])).toMatchObject({ type: 'incident.resolved' });
  });

  it('no_calls: says nothing outside the active hours', async () => {
    channel.received.length = 0;
    const now = new Date();
    // Hours that end a minute before now and start two minutes after: now is outside them.
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const hours = `${hhmm(new Date(now.getTime() + 120_000))}-${hhmm(new Date(now.getTime() - 60_000))}`;
    const server = await serveWith({ no_calls: { quiet_for: '1s', active_hours: hours } }, { timezone: 'UTC' });
    await post(server.url, sampleCall());
    await new Promise((r) => setTimeout(r, 1800));
    expect(messages('no_calls')).toEqual([]);
  });

  it('problem_rate: opens when most recent calls carry problems, resolves when the ratio falls back', async () => {
    channel.received.length = 0;
    const server = await serveWith({ problem_rate: { window: '1h', min_calls: 3, ratio: 0.5 } });
    const broken = () => sampleCall({ phone_number: 'not a number', call_date: 'sometime' });
    for (let i = 0; i < 3; i++) {
      const reply = await (await post(server.url, broken())).json();
      expect(reply.problems.length).toBeGreaterThan(0);
    }
    const opened = await until(() => messages('problem_rate')[0]);
    expect(opened!.incident).toMatchObject({ key: 'end-of-call', counts: { with_problems: 3 } });
    await post(server.url, broken());
    for (let i = 0; i < 5; i++) await post(server.url, sampleCall());
    const resolved = await until(() => messages('problem_rate')[1]);
    expect(resolved).toMatchObject({ type: 'incident.resolved', incident: { counts: { with_problems: 4 } } });
  });

  it('held_waiting: opens when a held call is older than `older_than`, resolves once it is released', async () => {
    channel.received.length = 0;
    const server = await serveWith(
      { held_waiting: { older_than: '300ms' } },
      { hooks: { 'end-of-call': { on_problem: 'hold' } } },
    );
    const held = await (await post(server.url, sampleCall({ phone_number: 'not a number' }))).json();
    expect(held.status).toBe('held');
    const opened = await until(() => messages('held_waiting')[0]);
    expect(opened!.incident).toMatchObject({ key: 'end-of-call', counts: { held: 1 } });
    expect((await adminApi(server, `/calls/${held.id}/release`, { method: 'POST' })).status).toBe(200);
    expect(await until(() => messages('held_waiting')[1])).toMatchObject({ type: 'incident.resolved' });
  });

  it('lost_calls: a reconcile run that stores lost calls is one notice, opened and resolved in one message', async () => {
    channel.received.length = 0;
    const service = await startFakeService({
      state: {
        campaigns: [
          { id: 'c1', campaigns_name: 'Diwali offers', started_at: '2026-11-20T09:00:00.000Z', is_started: true },
        ],
        audiences: {
          c1: [
            {
              first_name: 'Meera',
              phone: '09811122233',
              status: 'completed',
              call_duration_in_sec: '95',
              recording_url: 'https://rec.example/r3.mp3',
            },
            {
              first_name: 'Kiran',
              phone: '9822233344',
              status: 'completed',
              call_duration_in_sec: '40',
              recording_url: 'https://rec.example/r4.mp3',
            },
          ],
        },
      },
    });
    try {
      const server = await serveWith({ lost_calls: true });
      const args = ['reconcile', '--api-url', service.baseUrl, '--api-key', service.apiKey, '--since', '2026-11-01'];
      const env = {
        CALLHOOK_DATA_DIR: server.dataDir,
        CALLHOOK_API_KEYS: KEY,
        CALLHOOK_ADMIN_TOKEN: ADMIN,
        CALLHOOK_CONFIG: join(server.dataDir, 'config.json'),
      };
      expect((await runCallhook([...args, '--dry-run'], env)).code).toBe(0);
      expect((await runCallhook(args, env)).code).toBe(0);
      // The running serve sends what the command kept.
      const notice = await until(() => messages('lost_calls')[0]);
      expect(notice).toMatchObject({ type: 'incident.opened', incident: { key: null, counts: { stored: 2 } } });
      expect(notice!.incident.resolved_at).toBe(notice!.incident.opened_at);
      // A second run finds nothing lost: no notice.
      expect((await runCallhook(args, env)).code).toBe(0);
      await new Promise((r) => setTimeout(r, 500));
      expect(messages('lost_calls')).toHaveLength(1);
      expect((await incidents(server)).map((i: any) => [i.rule, i.state])).toEqual([['lost_calls', 'resolved']]);
    } finally {
      await service.close();
    }
  });

  it('an incident open at a restart is neither forgotten nor told again', async () => {
    channel.received.length = 0;
    const dataDir = tempDir();
    const rules = { auth_failures: { max: 100, after_success: '1h', quiet: '3s' } };
    const first = await serveWith(rules, {}, dataDir);
    await post(first.url, sampleCall());
    await post(first.url, sampleCall(), { key: OTHER_KEY });
    await until(() => messages('auth_failures').length === 1);
    await first.close();
    servers.splice(servers.indexOf(first), 1);

    const second = await serveWith(rules, {}, dataDir);
    await new Promise((r) => setTimeout(r, 800));
    expect(messages('auth_failures')).toHaveLength(1);
    expect(await incidents(second, 'open')).toHaveLength(1);
    // It still resolves, once, from the second serve.
    const resolved = await until(() => messages('auth_failures')[1], { timeoutMs: 15_000 });
    expect(resolved?.type).toBe('incident.resolved');
    expect(storedIncidents(dataDir)).toEqual([
      { rule: 'auth_failures', key: 'end-of-call', resolved_at: expect.any(String) },
    ]);
  });

  it('keeps an alert message that went dead on its incident, and raises no incident about it', async () => {
    const dead = await startReceiver((_req, res) => res.writeHead(404).end('no such hook'));
    try {
      const server = await startServer({
        config: {
          auth_limit: { max: 1000 },
          alerts: {
            every: '100ms',
            channels: [{ name: 'broken', type: 'http', url: `${dead.url}/gone`, retry: { attempts: 1 } }],
            rules: { auth_failures: { max: 1, quiet: '1h' } },
          },
        },
      });
      servers.push(server);
      await post(server.url, sampleCall(), { key: OTHER_KEY });
      const incident = await until(async () => {
        const [first] = await incidents(server);
        return first?.messages[0]?.state === 'dead' ? first : undefined;
      });
      expect(incident.messages[0]).toMatchObject({
        channel: 'broken',
        state: 'dead',
        last_error: expect.stringMatching(/404/),
      });
      await new Promise((r) => setTimeout(r, 500));
      expect((await incidents(server)).map((i: any) => i.rule)).toEqual(['auth_failures']);
    } finally {
      await dead.close();
    }
  });

  it('tells no caller’s data in any message', () => {
    const all = channel.received.map((r) => r.body).join('\n');
    expect(all.length).toBeGreaterThan(0);
    for (const personal of ['Asha', 'Verma', '98123', 'kettles', 'Meera', '9811122233', KEY, OTHER_KEY, ADMIN])
      expect(all).not.toContain(personal);
  });
});
