import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/program.js';
import { sqlitePath } from '../src/store/open.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { runCallhook } from './helpers/cli.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  jsonlRecords,
  post,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';
import { commitData } from './helpers/store-inputs.js';

/**
 * `callhook calls redeliver --sink NAME --from DATE --to DATE` end to end (docs/reference.md#a-period-to-one-sink): calls
 * stored while the config had one sink, serve restarted on the same data dir with a second sink added, and the CLI,
 * in this process, sending a period's calls to the new sink through the running serve. The period is days in the
 * config's zone (Asia/Kolkata, UTC+05:30), both ends included.
 */

const ZONE = 'Asia/Kolkata';
const HOOK = 'end-of-call';
const cli = { CALLHOOK_DATA_DIR: tempDir(), CALLHOOK_ADMIN_TOKEN: ADMIN };

let dataDir: string;
let receiver: Receiver;
let server: TestServer;
/** The stored calls by name; `in…` fall in 10 to 12 January 2026 where the operator is. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  dataDir = tempDir();
  receiver = await startReceiver();
  // Calls of January, stored with a delivery to the one sink there was then.
  const store = openSqliteStore({ path: sqlitePath(dataDir) });
  const order = { first_name: 'Asha', call_outcome: 'order placed' };
  const stored = async (name: string, at: string, data = order, status: 'accepted' | 'held' = 'accepted') =>
    (ids[name] = await commitData(store, HOOK, data, at, status, status === 'held' ? [] : ['old']));
  await stored('before', '2026-01-09T18:29:00.000Z'); // 9 January, 23:59 there
  await stored('in1', '2026-01-09T18:31:00.000Z'); // 10 January, 00:01 there
  await stored('in2', '2026-01-11T06:00:00.000Z');
  await stored('notAnOrder', '2026-01-11T07:00:00.000Z', { first_name: 'Ravi', call_outcome: 'not interested' });
  await stored('held', '2026-01-11T08:00:00.000Z', order, 'held');
  await stored('in3', '2026-01-12T18:29:00.000Z'); // 12 January, 23:59 there
  await stored('after', '2026-01-12T18:31:00.000Z'); // 13 January, 00:01 there
  await store.close();

  const hooks = { [HOOK]: { on_problem: 'hold' } };
  const before = await startServer({
    dataDir,
    config: { timezone: ZONE, hooks, sinks: [{ name: 'old', type: 'jsonl' }] },
  });
  expect((await post(before.url, sampleCall())).status).toBe(200);
  await until(() => jsonlRecords(dataDir).length === 7);
  await before.close();

  // The new sink, added to the config after the calls were stored; paused, so what is queued for it stays queued.
  const added = {
    name: 'new',
    type: 'http',
    url: `${receiver.url}/calls`,
    paused: true,
    when: { field: 'call_outcome', eq: 'order placed' },
  };
  server = await startServer({
    dataDir,
    config: { timezone: ZONE, hooks, sinks: [{ name: 'old', type: 'jsonl' }, added] },
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const redeliver = (...args: string[]) =>
  runCallhook(['calls', 'redeliver', '--sink', 'new', '--from', '2026-01-10', '--to', '2026-01-12', ...args], cli);
const withUrl = () => ['--url', server.url];
const toNew = async () => (await adminApi(server, '/deliveries?sink=new&limit=500')).body.deliveries;

describe('callhook calls redeliver --sink --from --to', () => {
  it('refuses a sink the serve does not have, naming those it has, and a call id given with --from', async () => {
    const unknown = await runCallhook(
      ['calls', 'redeliver', '--sink', 'nowhere', '--from', '2026-01-10', '--url', server.url],
      cli,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^callhook: serve at .* answered 400: Bad request: no sink is named nowhere \(sinks: old, new\)\n$/,
    );
    const both = await runCallhook(['calls', 'redeliver', ids.in1!, '--from', '2026-01-10', '--url', server.url], cli);
    expect(both).toMatchObject({ code: 2, stderr: `callhook: give a call id or --from, not both (${ids.in1})\n` });
    const neither = await runCallhook(['calls', 'redeliver', '--url', server.url], cli);
    expect(neither.stderr).toBe('callhook: give a call id, or --sink NAME --from DATE to send the calls of a period\n');
    const badDay = await runCallhook(
      ['calls', 'redeliver', '--sink', 'new', '--from', '2026-01-32', ...withUrl()],
      cli,
    );
    expect(badDay.stderr).toMatch(/answered 400: Bad request: from: must be a date \(YYYY-MM-DD\)/);
  });

  it('is accepted with 202 and the job as it starts, which GET /admin/jobs/<id> shows as it goes', async () => {
    const body = JSON.stringify({ from: '2026-01-10', to: '2026-01-12', dry_run: true });
    const started = await adminApi(server, '/sinks/new/redeliver', { method: 'POST', body });
    expect(started).toMatchObject({
      status: 202,
      body: { job: { kind: 'redeliver', state: 'running', sink: 'new', dry_run: true, total: null, done: 0 } },
    });
    const id = started.body.job.id as string;
    await until(async () => (await adminApi(server, `/jobs/${id}`)).body.state === 'done');
    expect((await adminApi(server, `/jobs/${id}`)).body).toMatchObject({
      from: '2026-01-09T18:30:00.000Z',
      to: '2026-01-12T18:30:00.000Z',
      total: 5,
      done: 5,
      queued: 3,
      skipped: { held: 1, not_for_sink: 1, pending: 0 },
      errors: [],
    });
    expect(await adminApi(server, '/jobs/no-such-job')).toMatchObject({
      status: 404,
      body: { error: 404, message: expect.stringMatching(/^Not found: no job with id no-such-job \(jobs live/) },
    });
    expect(await adminApi(server, '/sinks/new/redeliver', { method: 'POST', body: '{}' })).toMatchObject({
      status: 400,
      body: { message: 'Bad request: from: Invalid input: expected string, received undefined' },
    });
  });

  it('says what a dry run would send, and sends nothing', async () => {
    const dry = await redeliver('--dry-run', ...withUrl());
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toBe(
      'would send 3 calls to new of 5 calls received from 2026-01-09T18:30:00.000Z to 2026-01-12T18:30:00.000Z; ' +
        'skipped 1 not for this sink, 1 held; dry run: nothing sent\n',
    );
    expect(await toNew()).toEqual([]);
  });

  it('queues every call of the period that the sink takes, once, and none outside it or held; a second run queues none', async () => {
    const first = await redeliver(...withUrl());
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe(
      'queued 3 calls for new of 5 calls received from 2026-01-09T18:30:00.000Z to 2026-01-12T18:30:00.000Z; ' +
        'skipped 1 not for this sink, 1 held\n',
    );
    const queued = (await toNew()).map((d: { callId: string; state: string }) => [d.callId, d.state]);
    expect(queued.sort()).toEqual([ids.in1, ids.in2, ids.in3].sort().map((id) => [id, 'pending']));

    // Again while those deliveries are pending: nothing is queued twice.
    const again = await redeliver(...withUrl());
    expect(again.stdout).toBe(
      'queued 0 calls for new of 5 calls received from 2026-01-09T18:30:00.000Z to 2026-01-12T18:30:00.000Z; ' +
        'skipped 1 not for this sink, 1 held, 3 already pending or in flight\n',
    );
    expect(await toNew()).toHaveLength(3);

    // Resumed, the sink receives each call of the period once.
    expect((await adminApi(server, '/sinks/new/resume', { method: 'POST' })).status).toBe(200);
    await until(() => receiver.received.length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const arrived = receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(arrived.sort()).toEqual([ids.in1, ids.in2, ids.in3].sort());
    await until(async () => (await toNew()).every((d: { state: string }) => d.state === 'done'));
  });

  it('shows its progress on a terminal, then the summary; counts a call delivered already as one to send again', async () => {
    const stderr = written(true);
    const stdout = written(false);
    const args = ['calls', 'redeliver', '--sink', 'new', '--from', '2026-01-10', '--dry-run', ...withUrl()];
    const env = { ...process.env, ...cli, LOG_LEVEL: 'silent' };
    const code = await runCli([process.execPath, 'callhook', ...args], {
      env,
      stdin: Readable.from([]),
      stdout,
      stderr,
    });
    expect(code).toBe(0);
    // Each show and the clear at the end redraw the line: carriage return, then erase to its end.
    const redraw = '\r\x1b[K';
    expect(stderr.text().startsWith(`${redraw}counting for new: `)).toBe(true);
    expect(stderr.text().split(redraw).slice(1, -1)).toContainEqual(expect.stringMatching(/^counting for new: /));
    expect(stderr.text().endsWith(redraw)).toBe(true);
    // Up to now: the three delivered (a period's redelivery is a deliberate resend), the one of 13 January and the
    // one posted on the day this runs.
    expect(stdout.text()).toMatch(
      /^would send 5 calls to new of 7 calls received from 2026-01-09T18:30:00\.000Z to \S+; skipped 1 not for this sink, 1 held; dry run: nothing sent\n$/,
    );
  });

  it('says when the job is gone from serve (a restart), and how to send the rest', async () => {
    const job = { id: 'job-1', kind: 'redeliver', state: 'running', sink: 'new', dry_run: false, total: 10 };
    const fake = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST') res.writeHead(202).end(JSON.stringify({ job: { ...job, done: 4, queued: 4 } }));
      else res.writeHead(404).end(JSON.stringify({ error: 404, message: 'Not found: no job with id job-1' }));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      const gone = await runCallhook(
        ['calls', 'redeliver', '--sink', 'new', '--from', '2026-01-10', '--url', url],
        cli,
      );
      expect(gone.code).toBe(2);
      expect(gone.stderr).toBe(
        'callhook: the job job-1 is gone: the serve that ran it restarted, and jobs live in its memory. ' +
          'Before it stopped it had queued 4 calls of 4 calls looked at; run the command again to send the rest ' +
          '(calls already pending are not queued twice)\n',
      );
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});

/** A stream that keeps what is written to it; `tty` makes it a terminal's, as progressLine reads one. */
function written(tty: boolean): Writable & { isTTY: boolean; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  return Object.assign(stream, { isTTY: tty, text: () => Buffer.concat(chunks).toString('utf8') });
}
