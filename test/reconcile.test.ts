import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client/index.js';
import { loadConfig } from '../src/config.js';
import { compileHooks, createIntake } from '../src/intake/pipeline.js';
import { reconcile } from '../src/reconcile/reconcile.js';
import { secondSighting } from '../src/reconcile/schedule.js';
import type { CallRecord } from '../src/record.js';
import { parseReconcileRun } from '../src/store/reconcile-run.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { type FakeService, startFakeService } from './fakes/calling-service.js';
import { runCallhook } from './helpers/cli.js';
import {
  ADMIN,
  closedPort,
  jsonlRecords,
  KEY,
  post,
  readStoreFile,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
  until,
} from './helpers/server.js';

/**
 * `callhook reconcile` against a local fake of the calling service: it recovers exactly the calls whose webhook
 * never arrived, by the matching rule of src/reconcile/reconcile.ts, and a second run adds none.
 */

/** The campaigns and audiences the service lists; the comments say what reconcile must make of each entry. */
function serviceState() {
  return {
    campaigns: [
      { id: 'c1', campaigns_name: 'Diwali offers', started_at: '2026-11-20T09:00:00.000Z', is_started: true },
      { id: 'c2', campaigns_name: 'Follow-ups', started_at: '2026-11-21 10:30:00', is_started: true },
      { id: 'c3', campaigns_name: 'Draft', started_at: '', is_started: false },
      { id: 'c0', campaigns_name: 'Last month', started_at: '2026-10-01T09:00:00.000Z', is_started: true },
    ],
    audiences: {
      c1: [
        // Its webhook arrived, with the recording: matched by recording URL.
        {
          first_name: 'Asha',
          last_name: 'Verma',
          phone: '9812345678',
          status: 'completed',
          call_duration_in_sec: '120',
          call_sentiment: 'Positive',
          recording_url: 'https://rec.example/r1.mp3',
          calltranscribe: 'AI: Hello…',
        },
        // Its webhook arrived without a recording URL: matched by phone and date.
        {
          first_name: 'Ravi',
          last_name: 'Kumar',
          phone: '+91 98765 43210',
          status: 'completed',
          call_duration_in_sec: '64',
          call_sentiment: 'Neutral',
          recording_url: 'https://rec.example/r2.mp3',
        },
        // Lost: recovered.
        {
          first_name: 'Meera',
          last_name: 'Iyer',
          phone: '09811122233',
          status: 'completed',
          call_duration_in_sec: '95',
          call_sentiment: 'negative',
          recording_url: 'https://rec.example/r3.mp3',
          calltranscribe: 'AI: Namaste…',
          is_meeting_scheduled: true,
        },
        // Never connected: no call, so no webhook was due.
        {
          first_name: 'Nobody',
          last_name: 'Home',
          phone: '9800000001',
          status: 'no-answer',
          call_duration_in_sec: '0',
          recording_url: '',
          calltranscribe: '',
        },
      ],
      c2: [
        // Asha again, another call with another recording: her stored call has r1, so this one was lost.
        {
          first_name: 'Asha',
          last_name: 'Verma',
          phone: '+919812345678',
          status: 'completed',
          call_duration_in_sec: '30',
          recording_url: 'https://rec.example/r4.mp3',
        },
        // Lost, known by its transcript only.
        {
          first_name: 'Kiran',
          last_name: 'Rao',
          phone: '98450 12345',
          status: 'completed',
          call_duration_in_sec: '',
          calltranscribe: 'AI: Hi Kiran…',
        },
      ],
      c3: [
        {
          first_name: 'Not',
          last_name: 'Called',
          phone: '9800000002',
          call_duration_in_sec: '40',
          recording_url: 'https://rec.example/never.mp3',
        },
      ],
      c0: [
        {
          first_name: 'Old',
          last_name: 'Call',
          phone: '9800000003',
          call_duration_in_sec: '40',
          recording_url: 'https://rec.example/old.mp3',
        },
      ],
    },
  };
}

/** The last run as the store keeps it (store/reconcile-run.ts), read from the file. */
const lastRun = (server: TestServer) =>
  parseReconcileRun(
    readStoreFile(
      server.dataDir,
      (db) => db.prepare(`SELECT value FROM meta WHERE key = 'last-reconcile'`).pluck().get() as string | undefined,
    ),
  );

async function storedCalls(server: TestServer): Promise<CallRecord[]> {
  const res = await fetch(`${server.url}/admin/calls?limit=500`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return ((await res.json()) as { calls: { record: CallRecord }[] }).calls.map((c) => c.record);
}

describe('callhook reconcile', () => {
  let server: TestServer;
  let service: FakeService;
  let env: Record<string, string>;
  let args: string[];

  beforeAll(async () => {
    server = await startServer();
    service = await startFakeService({ state: serviceState() });
    env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_API_KEYS: KEY, CALLHOOK_ADMIN_TOKEN: ADMIN };
    args = ['reconcile', '--api-url', service.baseUrl, '--api-key', service.apiKey, '--since', '2026-11-01', '--json'];
    for (const call of [
      sampleCall({
        first_name: 'Asha',
        phone_number: '+91 98123 45678',
        call_date: '2026-11-20',
        recording_url: 'https://rec.example/r1.mp3',
      }),
      sampleCall({ first_name: 'Ravi', last_name: 'Kumar', phone_number: '9876543210', call_date: '2026-11-20' }),
    ])
      expect((await post(server.url, call)).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await service?.close();
  });

  it('lists in a dry run what it would add, and stores nothing', async () => {
    const { code, stdout } = await runCallhook([...args, '--dry-run'], env);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ dry_run: true, campaigns: 2, entries: 6, calls: 5, matched: 2 });
    expect(summary.recovered.map((c: { name: string; campaign: string }) => `${c.campaign}/${c.name}`)).toEqual([
      'Diwali offers/Meera Iyer',
      'Follow-ups/Asha Verma',
      'Follow-ups/Kiran Rao',
    ]);
    expect(summary.skipped.map((s: { campaign: string }) => s.campaign)).toEqual(['Draft', 'Last month']);
    expect(await storedCalls(server)).toHaveLength(2);
    // Kept for the dashboard's overview, marked as a dry run (docs/reference.md#dashboard).
    expect(lastRun(server)).toMatchObject({
      trigger: 'cli',
      since: '2026-11-01',
      dryRun: true,
      campaigns: 2,
      calls: 5,
      stored: 3,
      alreadyReceived: 2,
      errors: 0,
      error: null,
    });
  });

  it('stores exactly the lost calls, normalised, and delivers them to the sinks', async () => {
    const { code, stdout } = await runCallhook(args, env);
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ dry_run: false, calls: 5, matched: 2 });
    expect(summary.recovered).toHaveLength(3);

    const recovered = (await storedCalls(server)).filter((r) => r.source === 'reconcile');
    expect(recovered.map((r) => r.data.phone_number).sort()).toEqual([
      '+919811122233',
      '+919812345678',
      '+919845012345',
    ]);
    const meera = recovered.find((r) => r.data.first_name === 'Meera')!;
    expect(meera.data).toMatchObject({
      last_name: 'Iyer',
      call_date: '2026-11-20',
      call_duration: 95,
      sentiment_analysis: 'Negative',
      recording_url: 'https://rec.example/r3.mp3',
    });
    expect(meera.extra).toMatchObject({
      campaign_id: 'c1',
      campaign_name: 'Diwali offers',
      audience_status: 'completed',
      transcript: 'AI: Namaste…',
      is_meeting_scheduled: true,
    });
    // The service knows no outcome or summary: the record says so, as a webhook missing them would.
    expect(meera.problems.map((p) => p.field).sort()).toEqual(['call_outcome', 'call_summary']);
    expect(recovered.find((r) => r.data.first_name === 'Kiran')!.data.call_date).toBe('2026-11-21');

    // A running serve delivers what the command stored, as it would a webhook's call.
    await until(() => recovered.every((r) => jsonlRecords(server.dataDir).some((j) => j.id === r.id)));
  });

  it('adds nothing on a second run', async () => {
    const { code, stdout } = await runCallhook(args, env);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ calls: 5, matched: 5, recovered: [] });
    expect(await storedCalls(server)).toHaveLength(5);
  });

  it('prints what it added, one line a call, and a summary', async () => {
    const { code, stdout } = await runCallhook(
      args.filter((a) => a !== '--json'),
      env,
    );
    expect(code).toBe(0);
    expect(stdout.trim().split('\n').at(-1)).toBe(
      '2 campaigns, 6 audience entries, 5 placed calls: 5 already stored, 0 added',
    );
  });

  it('exits non-zero with one clear line on a wrong key, never printing the key', async () => {
    const wrong = 'wrong-key-0123456789abcdef';
    const { code, stdout, stderr } = await runCallhook(
      ['reconcile', '--api-url', service.baseUrl, '--api-key', wrong],
      env,
    );
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/refused the API key \(HTTP 401/);
    expect(stderr).not.toContain(wrong);
    const failed = lastRun(server)!;
    expect(failed).toMatchObject({ dryRun: false, since: null, campaigns: 0, calls: 0, stored: 0, errors: 1 });
    expect(failed.error).toMatch(/refused the API key \(HTTP 401/);
    expect(failed.error).not.toContain(wrong);
  });

  it('exits non-zero with one clear line when the service cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/api/v1`;
    const { code, stderr } = await runCallhook(['reconcile', '--api-url', url, '--api-key', service.apiKey], env);
    expect(code).not.toBe(0);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(
      `cannot reach the calling service at ${url}: GET /campaign/list: network error: connect ECONNREFUSED`,
    );
  });

  it('refuses to store calls under an in-call hook', async () => {
    const dir = tempDir();
    const config = join(dir, 'callhook.json');
    writeFileSync(config, JSON.stringify({ hooks: { 'end-of-call': {}, lookup: { kind: 'in-call' } } }));
    const { code, stderr } = await runCallhook([...args, '--hook', 'lookup', '--config', config], {
      ...env,
      CALLHOOK_DATA_DIR: dir,
    });
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('callhook: --hook: "lookup" is an in-call hook, which stores nothing');
  });

  it('refuses a bad --since with one line', async () => {
    const { code, stderr } = await runCallhook([...args.slice(0, 5), '--since', 'last week'], env);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe('callhook: --since takes a date (2026-11-01) or an age (7d, 12h, 2w), not "last week"');
  });
});

describe('reconcile and a regular caller', () => {
  it('finds the campaign call among hundreds of older calls of the same number', async () => {
    const service = await startFakeService({
      state: {
        campaigns: [{ id: 'c9', campaigns_name: 'Renewals', started_at: '2026-11-20T09:00:00.000Z', is_started: true }],
        // The service lists the call without a recording, so only the phone and the date can match it.
        audiences: {
          c9: [
            {
              first_name: 'Dev',
              last_name: 'Shah',
              phone: '98222 00000',
              call_duration_in_sec: '50',
              calltranscribe: 'AI: Hello Dev…',
            },
          ],
        },
      },
    });
    const server = await startServer();
    try {
      const older = Array.from({ length: 250 }, (_, n) =>
        sampleCall({ first_name: 'Dev', phone_number: '9822200000', call_date: `2026-0${1 + (n % 9)}-1${n % 10}` }),
      );
      for (let i = 0; i < older.length; i += 50) {
        for (const res of await Promise.all(older.slice(i, i + 50).map((call) => post(server.url, call))))
          expect(res.status).toBe(200);
      }
      expect(
        (await post(server.url, sampleCall({ first_name: 'Dev', phone_number: '9822200000', call_date: '2026-11-21' })))
          .status,
      ).toBe(200);

      const env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_API_KEYS: KEY, CALLHOOK_ADMIN_TOKEN: ADMIN };
      const run = await runCallhook(
        ['reconcile', '--api-url', service.baseUrl, '--api-key', service.apiKey, '--json'],
        env,
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ calls: 1, matched: 1, recovered: [] });
    } finally {
      await server.close();
      await service.close();
    }
  });
});

describe('reconcile on a schedule inside serve', () => {
  it('recovers lost calls without anyone running the command', async () => {
    const service = await startFakeService({ state: serviceState() });
    const server = await startServer({
      config: { reconcile: { api_url: service.baseUrl, api_key: service.apiKey, interval: '1h', lookback: '3650d' } },
    });
    try {
      // The first run comes a few seconds after start-up; every placed call of every started campaign is lost here.
      const recovered = (await until(
        async () => {
          const calls = (await storedCalls(server)).filter((r) => r.source === 'reconcile');
          return calls.length === 6 ? calls : undefined;
        },
        { timeoutMs: 20_000, everyMs: 200 },
      ))!;
      expect(new Set(recovered.map((r) => r.data.recording_url ?? r.data.phone_number)).size).toBe(6);
      expect(service.requests.every((r) => r.headers['x-api-key'] === service.apiKey)).toBe(true);
      // The scheduled run is kept for the overview as the command's is, once it has ended.
      const kept = await until(() => lastRun(server), { timeoutMs: 20_000, everyMs: 200 });
      expect(kept).toMatchObject({
        trigger: 'serve',
        dryRun: false,
        calls: 6,
        stored: 6,
        alreadyReceived: 0,
        errors: 0,
      });
    } finally {
      await server.close();
      await service.close();
    }
  });
});

describe('reconcile runs on a schedule', () => {
  it('stores a call that ended between two runs only if the next run finds it missing too', async () => {
    const entry = (name: string, n: number) => ({
      first_name: name,
      phone: `98765000${n}0`,
      call_duration_in_sec: '42',
      recording_url: `https://rec.example/s${n}.mp3`,
    });
    const service = await startFakeService({
      state: {
        campaigns: [{ id: 'c5', campaigns_name: 'Weekly', started_at: '2026-11-20T09:00:00.000Z', is_started: true }],
        audiences: { c5: [entry('Anu', 1)] },
      },
    });
    const store = openSqliteStore({ path: ':memory:' });
    const hook = compileHooks(loadConfig({})).get('end-of-call')!;
    const ingest = createIntake({ store });
    const client = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey });
    // What scheduleReconcile does at each tick, driven here one run at a time.
    const sightings = secondSighting();
    const run = async () => {
      const summary = await reconcile({ client, store, hook, ingest, region: 'IN', defer: sightings.defer });
      sightings.endRun();
      return { recovered: summary.recovered.map((r) => r.recordingUrl), deferred: summary.deferred };
    };
    const stored = async () =>
      (await store.listCalls({ limit: 500 })).map((c) => `${c.record.source} ${c.record.data.recording_url}`).sort();
    try {
      // The first run stores at once what it finds missing: no earlier run saw it.
      expect(await run()).toEqual({ recovered: ['https://rec.example/s1.mp3'], deferred: 0 });

      // Two calls end; a run sees both before their webhooks, and leaves them.
      service.state.audiences.c5!.push(entry('Bala', 2), entry('Chitra', 3));
      expect(await run()).toEqual({ recovered: [], deferred: 2 });

      // Bala's webhook arrives; Chitra's never does. The next run adds Chitra alone.
      const fields = {
        call_id: 'wh-bala',
        first_name: 'Bala',
        phone_number: '9876500020',
        recording_url: 'https://rec.example/s2.mp3',
      };
      const receipt = {
        hook: 'end-of-call',
        receivedAt: new Date().toISOString(),
        method: 'POST',
        contentType: 'application/json',
        size: 0,
      };
      await ingest({
        hook,
        fields,
        raw: { method: 'POST', content_type: 'application/json', query: {}, body: JSON.stringify(fields) },
        source: 'webhook',
        receipt,
      });
      expect(await run()).toEqual({ recovered: ['https://rec.example/s3.mp3'], deferred: 0 });
      expect(await run()).toEqual({ recovered: [], deferred: 0 });
      expect(await stored()).toEqual([
        'reconcile https://rec.example/s1.mp3',
        'reconcile https://rec.example/s3.mp3',
        'webhook https://rec.example/s2.mp3',
      ]);
    } finally {
      await store.close();
      await service.close();
    }
  });
});
