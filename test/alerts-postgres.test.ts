import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './helpers/database.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';

/**
 * Alerts on PostgreSQL (docs/reference.md#alerts): replicas sharing one database open one incident a key between them
 * and tell it once; a database made unreachable mid-run is a `store_outage`, told at once from memory while the
 * store cannot be asked, and kept, resolved, once a commit succeeds again.
 */

const url = serviceUrl('postgres');
const SIGNING = `whsec_${Buffer.from('alerts-postgres-signing-0123456').toString('base64')}`;

interface Message {
  type: string;
  incident: { id: string; rule: string; key: string | null; counts: Record<string, number> };
}

describe.skipIf(!url)('alerts on PostgreSQL', () => {
  let channel: Receiver;
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    channel = await startReceiver((_req, res) => res.writeHead(204).end());
    db = await freshDatabase(url!, 'callhook_alerts');
  });
  afterAll(async () => {
    await channel.close();
    await db.drop();
  });

  const messages = (rule: string): Message[] =>
    channel.received
      .map((r) => new Webhook(SIGNING).verify(r.body, r.headers as Record<string, string>) as Message)
      .filter((m) => m.incident.rule === rule);

  const serveOn = (databaseUrl: string, rules: Record<string, unknown>): Promise<TestServer> =>
    startServer({
      env: { DATABASE_URL: databaseUrl },
      config: {
        auth_limit: { max: 1000 },
        alerts: {
          every: '100ms',
          channels: [{ name: 'ops', type: 'http', url: `${channel.url}/alerts`, signing: { secret: SIGNING } }],
          rules: {
            dead_delivery: false,
            sink_backlog: false,
            store_outage: false,
            auth_failures: false,
            problem_rate: false,
            held_waiting: false,
            lost_calls: false,
            ...rules,
          },
        },
      },
    });

  it('opens one incident between two replicas that both see it, and tells it once each way', async () => {
    channel.received.length = 0;
    const rules = { no_calls: { quiet_for: '1s', active_hours: '00:00-24:00' } };
    const [a, b] = await Promise.all([serveOn(db.url, rules), serveOn(db.url, rules)]);
    try {
      await post(a.url, sampleCall());
      const opened = await until(() => messages('no_calls')[0]);
      // Both replicas evaluate every 100 ms: a second opening would have come by now.
      await new Promise((r) => setTimeout(r, 1000));
      expect(messages('no_calls')).toHaveLength(1);
      // A call on the other replica resolves it, once.
      await post(b.url, sampleCall());
      await until(() => messages('no_calls').length >= 2);
      await new Promise((r) => setTimeout(r, 500));
      expect(messages('no_calls').map((m) => [m.type, m.incident.id])).toEqual([
        ['incident.opened', opened!.incident.id],
        ['incident.resolved', opened!.incident.id],
      ]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('store_outage: told at once from memory while the database is unreachable, kept resolved once it is back', async () => {
    channel.received.length = 0;
    const proxy: TcpProxy = await startTcpProxy(db.url, 5432);
    const server = await serveOn(proxy.url(db.url), { store_outage: true });
    try {
      expect((await post(server.url, sampleCall())).status).toBe(200);
      await proxy.down();
      for (let i = 0; i < 3; i++) expect((await post(server.url, sampleCall())).status).toBe(503);
      const opened = await until(() => messages('store_outage')[0]);
      expect(opened).toMatchObject({ type: 'incident.opened', incident: { key: null } });

      await proxy.up();
      const resolved = await until(() => messages('store_outage')[1], { timeoutMs: 20_000 });
      expect(resolved).toMatchObject({
        type: 'incident.resolved',
        incident: { id: opened!.incident.id, counts: { refused: 3 } },
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(messages('store_outage')).toHaveLength(2);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query(
          `SELECT i.counts, i.resolved_at, m.kind, m.state FROM incidents i JOIN alert_messages m ON m.incident_id = i.id
           WHERE i.id = $1 ORDER BY m.id`,
          [opened!.incident.id],
        );
        expect(rows.map((r) => [r.counts, r.resolved_at !== null, r.kind, r.state])).toEqual([
          [{ refused: 3 }, true, 'opened', 'done'],
          [{ refused: 3 }, true, 'resolved', 'done'],
        ]);
      } finally {
        await client.end();
      }
    } finally {
      await server.close();
      await proxy.close();
    }
  });
});
