import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncidentPage, IncidentView } from '../src/admin/incidents.js';
import { newId } from '../src/ids.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { runCallhook } from './helpers/cli.js';
import { storesUnderTest } from './helpers/database.js';
import { ADMIN, adminApi, closedPort, startServer, type TestServer } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * How an operator sees and acknowledges the alerts' incidents other than on the dashboard (docs/reference.md#alerts):
 * `GET /admin/incidents`, `POST /admin/incidents/<id>/ack`, `callhook incidents list|ack` through them, and
 * `callhook_incidents_open{rule}` on /metrics, against a real serve over HTTP. Nothing opens incidents yet but the
 * store itself: the test opens them there, on the serve's own SQLite file or PostgreSQL database.
 */

const RULES = [
  'dead_delivery',
  'sink_backlog',
  'store_outage',
  'auth_failures',
  'no_calls',
  'problem_rate',
  'held_waiting',
  'lost_calls',
];

/** An ISO 8601 time in UTC, as the admin API writes every time. */
const anyTime = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown as string;

describe.each(storesUnderTest(serviceUrl('postgres'), 'callhook_incidents'))('incidents on %s', (_, open) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A serve of its own (in Asia/Kolkata, UTC+05:30), and a store on its database to open incidents in. */
  const serve = async (): Promise<{ server: TestServer; store: Store; config: string }> => {
    const { env, drop } = await open();
    cleanups.push(drop);
    const server = await startServer({ env, config: { timezone: 'Asia/Kolkata' } });
    cleanups.push(() => server.close());
    const store = await openStore({ databaseUrl: env.DATABASE_URL, dataDir: server.dataDir });
    cleanups.push(() => store.close());
    return { server, store, config: join(server.dataDir, 'config.json') };
  };
  /** Opens an incident of the rule and key at `at`, with an opening message queued for each channel. */
  const openIncident = async (
    store: Store,
    rule: string,
    key: string | null,
    {
      at = new Date().toISOString(),
      counts = { dead: 1 } as Record<string, number>,
      channels = ['ops'],
    }: { at?: string; counts?: Record<string, number>; channels?: string[] } = {},
  ) =>
    (
      await store.openIncident({
        id: newId(),
        rule,
        key,
        at,
        counts,
        summary: `${rule} ${key ?? ''}`.trim(),
        channels,
      })
    ).incident;

  it('lists incidents newest first, by state and rule, a page at a time, each with its messages', async () => {
    const { server, store } = await serve();
    // The first incident's opening went to ops, and went dead at the pager: each shown on it, as it is.
    const dead = await openIncident(store, 'dead_delivery', 'crm', { channels: ['ops', 'pager'] });
    const sent = await store.claimAlertMessages(10, 60_000);
    expect(sent.map((m) => m.channel)).toEqual(['ops', 'pager']);
    for (const m of sent)
      await store.finishAlertMessage(
        m.id,
        m.attempt,
        m.channel === 'ops' ? { outcome: 'ok' } : { outcome: 'dead', error: 'HTTP 400' },
      );
    const backlog = await openIncident(store, 'sink_backlog', 'crm', { at: '2026-03-01T10:00:00.000Z' });
    const outage = await openIncident(store, 'store_outage', null, { counts: { refused: 41 }, channels: [] });
    await store.resolveIncident('store_outage', null, new Date().toISOString(), ['ops']);

    const list = async (query = '') => {
      const { status, body } = await adminApi<IncidentPage>(server, `/incidents${query}`);
      expect(status, query).toBe(200);
      return body;
    };
    const ids = async (query = '') => (await list(query)).incidents.map((i) => i.id);

    const all = await list();
    expect(all.next).toBeNull();
    expect(all.incidents.map((i) => i.id)).toEqual([outage.id, backlog.id, dead.id]);
    expect(all.incidents[1]).toEqual({
      id: backlog.id,
      rule: 'sink_backlog',
      key: 'crm',
      state: 'open',
      summary: 'sink_backlog crm',
      opened_at: '2026-03-01T10:00:00.000Z',
      last_event: '2026-03-01T10:00:00.000Z',
      acknowledged_at: null,
      acknowledged_by: null,
      resolved_at: null,
      counts: { dead: 1 },
      messages: [
        { channel: 'ops', kind: 'opened', state: 'pending', attempts: 0, last_error: null, updated_at: anyTime },
      ],
    } satisfies IncidentView);
    expect(all.incidents[0]).toMatchObject({
      state: 'resolved',
      key: null,
      counts: { refused: 41 },
      resolved_at: anyTime,
      messages: [{ channel: 'ops', kind: 'resolved', state: 'pending' }],
    });
    expect(all.incidents[2]!.messages).toMatchObject([
      { channel: 'ops', kind: 'opened', state: 'done', attempts: 1, last_error: null },
      { channel: 'pager', kind: 'opened', state: 'dead', attempts: 1, last_error: 'HTTP 400' },
    ]);

    expect(await ids('?state=open')).toEqual([backlog.id, dead.id]);
    expect(await ids('?state=resolved')).toEqual([outage.id]);
    expect(await ids('?rule=sink_backlog')).toEqual([backlog.id]);
    expect(await ids('?rule=no_calls')).toEqual([]);
    expect(await ids('?state=open&rule=store_outage')).toEqual([]);
    // Given empty, as a form leaves a field, a filter filters nothing.
    expect(await ids('?state=&rule=')).toEqual([outage.id, backlog.id, dead.id]);

    const first = await list('?limit=2');
    expect(first.incidents.map((i) => i.id)).toEqual([outage.id, backlog.id]);
    expect(first.next).toBe(backlog.id);
    const second = await list(`?limit=2&after=${first.next}`);
    expect(second).toMatchObject({ incidents: [{ id: dead.id }], next: null });
    expect(await ids(`?state=open&limit=1&after=${backlog.id}`)).toEqual([dead.id]);

    // One, as listed; one that is not there is a 404 with the Error object.
    expect(await adminApi(server, `/incidents/${dead.id}`)).toEqual({ status: 200, body: all.incidents[2] });
    for (const unknown of [newId(), 'x%00y'])
      expect(await adminApi(server, `/incidents/${unknown}`), unknown).toEqual({
        status: 404,
        body: { error: 404, message: `Not found: no incident ${decodeURIComponent(unknown)}` },
      });
  });

  it('refuses a bad query with 400 and the Error object, naming the parameter', async () => {
    const { server } = await serve();
    for (const [query, message] of [
      ['state=closed', /^Bad request: state: /],
      ['rule=calls_dropped', /^Bad request: rule: .*dead_delivery/],
      ['limit=0', /^Bad request: limit: /],
      ['limit=501', /^Bad request: limit: /],
      ['limit=ten', /^Bad request: limit: /],
      ['colour=red', /^Bad request: colour: unknown parameter$/],
    ] as const) {
      const { status, body } = await adminApi(server, `/incidents?${query}`);
      expect({ status, body }, query).toEqual({
        status: 400,
        body: { error: 400, message: expect.stringMatching(message) },
      });
    }
    const res = await fetch(`${server.url}/admin/incidents`);
    expect(res.status).toBe(401);
  });

  it('acknowledges an open incident as admin-token, keeps the first acknowledgement, and refuses a resolved one', async () => {
    const { server, store } = await serve();
    const incident = await openIncident(store, 'auth_failures', 'end-of-call');
    const before = Date.now();
    const acked = await adminApi<IncidentView>(server, `/incidents/${incident.id}/ack`, { method: 'POST' });
    const after = Date.now();
    expect(acked).toMatchObject({
      status: 200,
      body: { id: incident.id, state: 'open', acknowledged_by: 'admin-token', resolved_at: null },
    });
    const at = Date.parse(acked.body.acknowledged_at!);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    expect((await store.getIncident(incident.id))?.acknowledgedBy).toBe('admin-token');

    // Again: the first stays, and the reply says so.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await adminApi<IncidentView>(server, `/incidents/${incident.id}/ack`, { method: 'POST' });
    expect(again).toEqual({ status: 200, body: acked.body });
    // One made by someone else first is kept too.
    const other = await openIncident(store, 'held_waiting', 'end-of-call');
    await store.acknowledgeIncident(other.id, 'ops@example.com', '2026-03-01T10:00:00.000Z');
    expect(await adminApi(server, `/incidents/${other.id}/ack`, { method: 'POST' })).toMatchObject({
      status: 200,
      body: { acknowledged_by: 'ops@example.com', acknowledged_at: '2026-03-01T10:00:00.000Z' },
    });

    expect(await adminApi(server, `/incidents/${newId()}/ack`, { method: 'POST' })).toMatchObject({
      status: 404,
      body: { error: 404, message: expect.stringMatching(/^Not found: no incident /) },
    });
    const resolved = await openIncident(store, 'no_calls', 'end-of-call');
    await store.resolveIncident('no_calls', 'end-of-call', new Date().toISOString(), []);
    expect(await adminApi(server, `/incidents/${resolved.id}/ack`, { method: 'POST' })).toEqual({
      status: 409,
      body: {
        error: 409,
        message: `Conflict: incident ${resolved.id} is resolved already: there is nothing to acknowledge`,
      },
    });
    expect((await store.getIncident(resolved.id))?.acknowledgedAt).toBeNull();
  });

  it('counts the open incidents of each rule on /metrics, 0 when none is open', async () => {
    const { server, store } = await serve();
    const series = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return Object.fromEntries(
        [...text.matchAll(/^callhook_incidents_open\{rule="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]),
      );
    };
    const zero = Object.fromEntries(RULES.map((rule) => [rule, 0]));
    expect(await series()).toEqual(zero);

    await openIncident(store, 'dead_delivery', 'crm');
    await openIncident(store, 'dead_delivery', 'sheet');
    await openIncident(store, 'lost_calls', null);
    expect(await series()).toEqual({ ...zero, dead_delivery: 2, lost_calls: 1 });

    await store.resolveIncident('dead_delivery', 'crm', new Date().toISOString(), []);
    await store.resolveIncident('lost_calls', null, new Date().toISOString(), []);
    expect(await series()).toEqual({ ...zero, dead_delivery: 1 });
  });

  it('callhook incidents list shows a table, --json the reply; ack acknowledges through the serve', async () => {
    const { server, store, config } = await serve();
    const cli = (...args: string[]) =>
      runCallhook(['incidents', ...args, '--url', server.url, '-c', config], {
        CALLHOOK_DATA_DIR: server.dataDir,
        CALLHOOK_ADMIN_TOKEN: ADMIN,
      });
    expect(await cli('list')).toEqual({ code: 0, stdout: 'no incidents\n', stderr: '' });

    const backlog = await openIncident(store, 'sink_backlog', 'crm', {
      at: '2026-03-01T10:00:00.000Z',
      counts: { pending: 12, oldest_minutes: 16 },
    });
    const outage = await openIncident(store, 'store_outage', null, { at: '2026-03-01T11:30:00.000Z', counts: {} });
    await store.resolveIncident('store_outage', null, new Date().toISOString(), []);

    const table = await cli('list');
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const rows = table.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/ {2,}/));
    expect(rows).toEqual([
      ['ID', 'RULE', 'KEY', 'OPENED', 'STATE', 'ACKNOWLEDGED BY', 'COUNTS'],
      [outage.id, 'store_outage', '-', '2026-03-01T17:00:00+05:30', 'resolved', '-', '-'],
      [backlog.id, 'sink_backlog', 'crm', '2026-03-01T15:30:00+05:30', 'open', '-', 'pending=12 oldest_minutes=16'],
    ]);
    // A table: each column starts where its header does.
    const lines = table.stdout.split('\n');
    expect(lines[1]!.indexOf('store_outage')).toBe(lines[0]!.indexOf('RULE'));
    expect(lines[2]!.indexOf('open')).toBe(lines[0]!.indexOf('STATE'));

    const ack = await cli('ack', backlog.id);
    expect(ack.stderr).toBe('');
    expect(ack.code).toBe(0);
    expect(ack.stdout).toMatch(
      new RegExp(
        `^${backlog.id} sink_backlog \\(crm\\): acknowledged by admin-token at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+\\+05:30\\n$`,
      ),
    );
    expect((await store.getIncident(backlog.id))?.acknowledgedBy).toBe('admin-token');

    const open = await cli('list', '--open');
    expect(
      open.stdout
        .split('\n')
        .slice(1, -1)
        .map((line) => line.split(/ {2,}/).slice(0, 6)),
    ).toEqual([[backlog.id, 'sink_backlog', 'crm', '2026-03-01T15:30:00+05:30', 'open', 'admin-token']]);
    expect((await cli('list', '--rule', 'store_outage')).stdout).toContain(outage.id);
    expect((await cli('list', '--rule', 'store_outage')).stdout).not.toContain(backlog.id);
    expect(await cli('list', '--open', '--rule', 'store_outage')).toMatchObject({ stdout: 'no open incidents\n' });
    const paged = await cli('list', '--limit', '1');
    expect(paged.stdout.split('\n').slice(1)).toEqual([
      expect.stringMatching(`^${outage.id} `),
      `more: --after ${outage.id}`,
      '',
    ]);
    expect((await cli('list', '--after', outage.id)).stdout).toContain(backlog.id);

    const json = await cli('list', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await adminApi(server, '/incidents')).body);
    expect(JSON.parse(json.stdout)).toMatchObject({ incidents: [{ id: outage.id }, { id: backlog.id }], next: null });
  });

  it('callhook incidents says why it could not, in one line, as the other commands', async () => {
    const { server, store, config } = await serve();
    const env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_ADMIN_TOKEN: ADMIN };
    const cli = (...args: string[]) => runCallhook(['incidents', ...args, '--url', server.url, '-c', config], env);
    const resolved = await openIncident(store, 'held_waiting', 'end-of-call');
    await store.resolveIncident('held_waiting', 'end-of-call', new Date().toISOString(), []);
    expect(await cli('ack', resolved.id)).toEqual({
      code: 2,
      stdout: '',
      stderr: `callhook: serve at ${server.url} answered 409: Conflict: incident ${resolved.id} is resolved already: there is nothing to acknowledge\n`,
    });
    const unknown = newId();
    expect(await cli('ack', unknown)).toEqual({
      code: 2,
      stdout: '',
      stderr: `callhook: serve at ${server.url} answered 404: Not found: no incident ${unknown}\n`,
    });
    const rule = await cli('list', '--rule', 'calls_dropped');
    expect(rule).toMatchObject({ code: 1, stdout: '' });
    expect(rule.stderr).toMatch(/^error: option '--rule <rule>' argument 'calls_dropped' is invalid\. .*dead_delivery/);
    expect(await cli('list', '--limit', '0')).toMatchObject({ code: 2, stdout: '' });

    const port = await closedPort();
    const none = await runCallhook(['incidents', 'list', '--url', `http://127.0.0.1:${port}`], env);
    expect(none).toMatchObject({ code: 2, stdout: '' });
    expect(none.stderr).toMatch(new RegExp(`^callhook: no callhook serve answers at http://127\\.0\\.0\\.1:${port} `));
  });
});
