import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { RecordSource, Scalar } from '../src/record.js';
import { SQLITE_FILE } from '../src/store/open.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { callhook, callhookOnTerminal, callhookPiped, runCallhook } from './helpers/cli.js';
import { startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  closedPort,
  jsonlRecords,
  KEY,
  post,
  readStoreFile,
  sampleCall,
  startServer,
  tempDir,
  until,
} from './helpers/server.js';
import { attemptOk, commitData, commitInput, unique } from './helpers/store-inputs.js';

/**
 * The `callhook` command: its output, its exit codes, and what it never prints. Run in this process (runCallhook),
 * but for what only a process shows, in a process of its own as a user runs it (callhook): a few commands end to end
 * through src/cli/index.ts (a success, a failure's one line and exit 2, an unknown command, serve), output on a
 * closed pipe, a terminal.
 */

describe('callhook config check', () => {
  it('prints the resolved hooks and sinks with every secret masked', async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.yaml');
    writeFileSync(path, 'hooks:\n  end-of-call: {}\n  orders:\n    keys: ["${ORDERS_KEY}"]\n    dedup: [order_id]\n');
    const secretKey = 'orders-secret-key-0123456789';
    // In a process of its own: the real entry runs a command end to end and exits 0.
    const { code, stdout } = await callhook(['config', 'check', '--config', path], {
      CALLHOOK_DATA_DIR: dir,
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
      ORDERS_KEY: secretKey,
      DATABASE_URL: 'postgres://app:pw-0123456789@db.internal/calls',
    });
    expect(code).toBe(0);
    const resolved = JSON.parse(stdout);
    expect(Object.keys(resolved.hooks)).toEqual(['end-of-call', 'orders']);
    expect(resolved.hooks.orders).toMatchObject({ dedup: ['order_id'], on_conflict: 'keep', keys: ['***'] });
    expect(resolved).toMatchObject({ phone_region: 'IN', date_order: 'DMY' });
    expect(resolved.sinks.map((s: { type: string }) => s.type)).toEqual(['log', 'jsonl']);
    for (const secret of [KEY, ADMIN, secretKey, 'pw-0123456789']) expect(stdout).not.toContain(secret);
    expect(resolved.store.url).toBe('postgres://app:***@db.internal/calls');
  });

  it('warns of a short key on stderr, naming the variable and never the key', async () => {
    const dir = tempDir();
    const { code, stdout, stderr } = await runCallhook(['config', 'check'], {
      CALLHOOK_DATA_DIR: dir,
      CALLHOOK_API_KEYS: 'test-key',
      CALLHOOK_ADMIN_TOKEN: ADMIN,
    });
    expect(code).toBe(0);
    expect(stderr).toBe(
      'warning: CALLHOOK_API_KEYS: a key shorter than 16 characters can be guessed; `callhook keys generate` makes a strong one\n',
    );
    expect(JSON.parse(stdout).api_keys).toEqual(['***']);
  });

  it('exits non-zero with one line naming the bad key', async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.yaml');
    writeFileSync(path, 'hooks:\n  end-of-call:\n    on_problem: ignore\n');
    const { code, stdout, stderr } = await runCallhook(['config', 'check', '--config', path], {
      CALLHOOK_DATA_DIR: dir,
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^callhook: .*hooks\.end-of-call\.on_problem/);
  });

  it('refuses an unknown sink type, listing the known ones', async () => {
    const dir = tempDir();
    const path = join(dir, 'c.json');
    writeFileSync(path, JSON.stringify({ sinks: [{ name: 'crm', type: 'salesforce' }] }));
    const { code, stderr } = await runCallhook(['config', 'check', '--config', path], { CALLHOOK_DATA_DIR: dir });
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown sink type "salesforce" \(known types: log, jsonl/);
  });

  it('refuses a `when` pattern that can backtrack catastrophically, naming the sink', async () => {
    const dir = tempDir();
    const path = join(dir, 'c.json');
    writeFileSync(
      path,
      JSON.stringify({ sinks: [{ name: 'crm', type: 'log', when: { field: 'call_summary', matches: '(a+)+$' } }] }),
    );
    const { code, stdout, stderr } = await runCallhook(['config', 'check', '--config', path], {
      CALLHOOK_DATA_DIR: dir,
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(
      /^callhook: .*sinks\[0\] \(crm\)\.when\.matches: "\(a\+\)\+\$" can backtrack catastrophically/,
    );
  });
});

describe('callhook config check: retention (docs/reference.md#retention)', () => {
  it('says what is kept how long: forever when nothing is set, else each duration', async () => {
    const dir = tempDir();
    const none = await runCallhook(['config', 'check'], { CALLHOOK_DATA_DIR: dir, CALLHOOK_API_KEYS: KEY });
    expect(JSON.parse(none.stdout).retention).toMatchObject({ kept: 'calls kept forever', calls: null, every: '5m' });
    const path = join(dir, 'callhook.yaml');
    writeFileSync(path, 'retention: { calls: 90d, raw: 720h, fields: { recording_url: 7d } }\n');
    const set = await runCallhook(['config', 'check', '--config', path], {
      CALLHOOK_DATA_DIR: dir,
      CALLHOOK_API_KEYS: KEY,
    });
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout).retention).toMatchObject({
      kept: 'calls kept 90d; raw requests 30d; field recording_url 1w',
      calls: '90d',
      raw: '30d',
      fields: { recording_url: '1w' },
    });
    // The default hook is deduplicated on recording_url: removing it costs the recognition of a repeat.
    expect(set.stderr).toContain('warning: retention.fields.recording_url: hook end-of-call is deduplicated on');
  });

  it('refuses a duration without its unit in one line naming the key', async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.yaml');
    writeFileSync(path, 'retention: { calls: 90 }\n');
    const { code, stdout, stderr } = await runCallhook(['config', 'check', '--config', path], {
      CALLHOOK_DATA_DIR: dir,
    });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/retention\.calls: 90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds$/m);
  });
});

describe('callhook keys', () => {
  it('generates keys for rotation, kept with mode 0600, and shows them', async () => {
    const dir = tempDir();
    const env = { CALLHOOK_DATA_DIR: dir };
    const first = await runCallhook(['keys', 'generate'], env);
    const second = await runCallhook(['keys', 'generate'], env);
    expect(first.code).toBe(0);
    const shown = await runCallhook(['keys', 'show'], env);
    expect(shown.stdout.trim().split('\n')).toEqual([second.stdout.trim(), first.stdout.trim()]);
    expect(statSync(join(dir, 'api-keys')).mode & 0o777).toBe(0o600);
    await runCallhook(['keys', 'generate', '--replace'], env);
    expect((await runCallhook(['keys', 'show'], env)).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('says so when there is no key yet', async () => {
    // In a process of its own: a failure through the real entry is one line and exit 2.
    const { code, stderr } = await callhook(['keys', 'show'], { CALLHOOK_DATA_DIR: tempDir() });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^callhook: no webhook key yet/);
  });
});

describe('callhook calls', () => {
  it('shows a call with every secret of the config masked, as the admin API does, in the record and the raw body', async () => {
    const server = await startServer();
    const { id } = await (await post(server.url, sampleCall({ call_summary: `caller read out ${KEY}` }))).json();
    await server.close();
    const show = await runCallhook(['calls', 'show', id], {
      CALLHOOK_DATA_DIR: server.dataDir,
      CALLHOOK_API_KEYS: KEY,
    });
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain(KEY);
    const shown = JSON.parse(show.stdout);
    expect(shown.record.data.call_summary).toBe('caller read out ***');
    expect(JSON.stringify(shown.raw)).toContain('caller read out ***');
  });

  it('lists, shows and exports what the store holds', async () => {
    const server = await startServer();
    const ids: string[] = [];
    for (const name of ['Asha', 'Ravi, Jr.'])
      ids.push((await (await post(server.url, sampleCall({ first_name: name }))).json()).id);
    await server.close();
    const env = { CALLHOOK_DATA_DIR: server.dataDir };

    const listed = async (args: string[]) =>
      (await runCallhook(['calls', 'list', ...args], env)).stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
    // Newest first, or oldest first when asked.
    expect(await listed([])).toEqual([...ids].reverse());
    expect(await listed(['--order', 'asc'])).toEqual(ids);
    const show = JSON.parse((await runCallhook(['calls', 'show', ids[0]!], env)).stdout);
    expect(show).toMatchObject({
      status: 'accepted',
      record: { id: ids[0], data: { first_name: 'Asha' } },
      raw: { method: 'POST' },
      edits: [],
    });
    // As GET /admin/calls/<id> shows it: the same operation (admin/calls.ts showCall).
    expect(show).toMatchObject({
      receipts: [{ callId: ids[0], outcome: 'accepted', status: 200 }],
      deliveries: expect.any(Array),
      attempts: expect.any(Array),
    });
    const jsonl = (await runCallhook(['calls', 'export'], env)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(jsonl.map((r) => r.id)).toEqual(ids);
    const csv = (await runCallhook(['calls', 'export', '--format', 'csv'], env)).stdout.split('\r\n');
    expect(csv[0]).toMatch(/^\uFEFFid,hook,dedup_key,received_at,source,first_name,/);
    expect(csv[2]).toContain('"Ravi, Jr."');

    expect((await runCallhook(['calls', 'show', 'nope'], env)).stderr).toBe('callhook: no call with id nope\n');
    expect((await runCallhook(['calls', 'export', '--format', 'xml'], env)).code).toBe(2);
  });

  it('lists test traffic only with --test-calls, or a --source that names it (docs/reference.md#test-traffic)', async () => {
    const server = await startServer();
    const real = (await (await post(server.url, sampleCall())).json()).id;
    const replayed = (await (await post(server.url, sampleCall(), { source: 'replay' })).json()).id;
    await server.close();
    const env = { CALLHOOK_DATA_DIR: server.dataDir };
    const listed = async (...args: string[]) =>
      (await runCallhook(['calls', 'list', ...args], env)).stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
    expect(await listed()).toEqual([real]);
    expect(await listed('--test-calls')).toEqual([replayed, real]); // newest first
    expect(await listed('--source', 'replay')).toEqual([replayed]);
  });
});

describe('callhook calls list', () => {
  /**
   * Four calls around two midnights of Asia/Kolkata (UTC+05:30), the config's timezone: one a second before the 27th
   * there, one at its first second, one in its last second, one at the 28th's first. Two are test traffic, one of a hook
   * that does not declare the names, one with the webhook key in its name.
   */
  async function aroundMidnight() {
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    writeFileSync(config, JSON.stringify({ timezone: 'Asia/Kolkata' }));
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const commit = async (
      name: string,
      at: string,
      source: RecordSource,
      data: Record<string, Scalar>,
      { hook = 'end-of-call', extra = {} }: { hook?: string; extra?: Record<string, unknown> } = {},
    ) => {
      const input = commitInput(hook, `call_id:${name}`, [], Date.parse(at), data);
      input.record.source = source;
      input.record.extra = extra;
      return (await store.commitCall(input)).id;
    };
    const ids = {
      late26: await commit('late26', '2026-11-26T18:29:59.000Z', 'webhook', { first_name: 'Ravi' }),
      early27: await commit('early27', '2026-11-26T18:30:00.000Z', 'webhook', {
        first_name: 'Asha',
        last_name: 'Verma',
        phone_number: '+919812345678',
        call_outcome: 'order placed',
      }),
      late27: await commit(
        'late27',
        '2026-11-27T18:29:59.500Z',
        'replay',
        { order_id: 'A1' },
        { hook: 'orders', extra: { first_name: 'Meena', call_outcome: 'callback' } },
      ),
      early28: await commit('early28', '2026-11-27T18:30:00.000Z', 'simulate', { first_name: `Key ${KEY}` }),
    };
    await store.close();
    const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    const env = { CALLHOOK_DATA_DIR: dataDir, CALLHOOK_CONFIG: config, CALLHOOK_API_KEYS: KEY };
    const list = async (...args: string[]) => {
      const { code, stdout, stderr } = await runCallhook(['calls', 'list', ...args], env);
      expect({ code, stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
      return stdout;
    };
    /** The calls listed, by name, in the order printed. */
    const listed = async (...args: string[]) =>
      (await list(...args))
        .split('\n')
        .filter(Boolean)
        .map((line) => names.get(line.split('\t')[0]!));
    return { env, ids, list, listed };
  }
  const everySource = ['--source', 'webhook,replay,simulate'];

  it("prints newest first, one tab-separated line a call with the caller's name, number and outcome, times in the timezone", async () => {
    const { ids, list, listed } = await aroundMidnight();
    const lines = (await list(...everySource)).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toEqual([
      `${ids.early28}\t2026-11-28T00:00:00+05:30\tend-of-call\taccepted\tKey ***\t\t\tcall_id:early28\t`,
      `${ids.late27}\t2026-11-27T23:59:59.500+05:30\torders\taccepted\tMeena\t\tcallback\tcall_id:late27\t`,
      `${ids.early27}\t2026-11-27T00:00:00+05:30\tend-of-call\taccepted\tAsha Verma\t+919812345678\torder placed\tcall_id:early27\t`,
      `${ids.late26}\t2026-11-26T23:59:59+05:30\tend-of-call\taccepted\tRavi\t\t\tcall_id:late26\t`,
    ]);
    expect(await listed(...everySource, '--order', 'asc')).toEqual(['late26', 'early27', 'late27', 'early28']);
    expect(await listed(...everySource, '--limit', '2')).toEqual(['early28', 'late27']);
  });

  it('reads --from and --to as whole days in the timezone, both included', async () => {
    const { listed } = await aroundMidnight();
    expect(await listed(...everySource, '--from', '2026-11-27', '--to', '2026-11-27')).toEqual(['late27', 'early27']);
    expect(await listed(...everySource, '--from', '2026-11-27')).toEqual(['early28', 'late27', 'early27']);
    expect(await listed(...everySource, '--to', '2026-11-26')).toEqual(['late26']);
    expect(await listed(...everySource, '--from', '2026-11-28', '--to', '2026-11-28')).toEqual(['early28']);
  });

  it('takes --source repeated or comma-separated, as the admin API filters by source', async () => {
    const { listed } = await aroundMidnight();
    expect(await listed('--source', 'replay', '--source', 'simulate')).toEqual(['early28', 'late27']);
    expect(await listed('--source', 'replay,simulate', '--order', 'asc')).toEqual(['late27', 'early28']);
    expect(await listed('--source', 'simulate')).toEqual(['early28']);
    expect(await listed('--source', 'webhook')).toEqual(['early27', 'late26']);
  });

  it('refuses a source or a day it cannot read, in one line', async () => {
    const { env } = await aroundMidnight();
    for (const [args, line] of [
      [
        ['--source', 'replay,tests'],
        '--source "tests" is not a source: one of webhook, reconcile, recovered, replay, simulate',
      ],
      [['--from', '27/11/2026'], '--from takes a day, YYYY-MM-DD, not "27/11/2026"'],
      [['--to', '2026-11-31'], '--to takes a day, YYYY-MM-DD, not "2026-11-31"'],
    ] as const) {
      expect(await runCallhook(['calls', 'list', ...args], env), args.join(' ')).toEqual({
        code: 2,
        stdout: '',
        stderr: `callhook: ${line}\n`,
      });
    }
  });
});

describe('callhook calls export', () => {
  // 2,500 commits and five spawned commands: over the default 30 s on a loaded machine (a full run failed on it).
  it('exports a store of several pages, with a CSV column for a field that only a late call has', {
    timeout: 120_000,
  }, async () => {
    const dataDir = tempDir();
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const at = '2026-11-20T10:00:00.000Z';
    for (let i = 0; i < 2500; i += 250) {
      await Promise.all(
        Array.from({ length: 250 }, (_, j) => commitData(store, 'end-of-call', { first_name: `Caller ${i + j}` }, at)),
      );
    }
    await commitData(store, 'end-of-call', { first_name: 'Last', gift_wrap: true }, at);
    await store.close();
    const env = { CALLHOOK_DATA_DIR: dataDir };

    const jsonl = (await runCallhook(['calls', 'export'], env)).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { data: { first_name: string } });
    expect(jsonl).toHaveLength(2501);
    expect(new Set(jsonl.map((r) => r.data.first_name)).size).toBe(2501);
    const csv = (await runCallhook(['calls', 'export', '--format', 'csv'], env)).stdout.split('\r\n').filter(Boolean);
    expect(csv).toHaveLength(2502);
    expect(csv[0]).toBe('\uFEFFid,hook,dedup_key,received_at,source,first_name,gift_wrap,problems');
    expect(csv.filter((line) => line.endsWith(',true,'))).toEqual([expect.stringContaining(',Last,true,')]);

    // Closed early by a real shell pipe: one line out, nothing on stderr, exit 0 (docs/reference.md#command-line). The
    // list asks for every call, so it writes more than a pipe holds (64 KiB) and meets the closed pipe as the exports
    // do.
    for (const args of [
      ['calls', 'list', '--limit', '3000'],
      ['calls', 'export'],
      ['calls', 'export', '--format', 'csv'],
    ]) {
      const { stdout, stderr } = await callhookPiped(args, 'head -1', env);
      expect(stdout.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1);
      expect(stderr, args.join(' ')).toBe('exit=0\n');
    }
  });

  it("writes CSV times in the config's timezone with their offset, and JSON lines as the record is stored", async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.yaml');
    writeFileSync(config, 'timezone: Asia/Kolkata\n');
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const { id } = await store.commitCall(
      commitInput('end-of-call', 'call_id:tz', [], Date.parse('2026-11-27T08:15:00.000Z')),
    );
    const stored = (await store.getCall(id))!.record;
    await store.close();
    const env = { CALLHOOK_DATA_DIR: dataDir, CALLHOOK_CONFIG: config };

    const csv = (await runCallhook(['calls', 'export', '--format', 'csv'], env)).stdout.split('\r\n');
    expect(csv[0]).toMatch(/^\uFEFFid,hook,dedup_key,received_at,/);
    expect(csv[1]).toBe(`${id},end-of-call,call_id:tz,2026-11-27T13:45:00+05:30,webhook,Asha,184,`);
    const jsonl = (await runCallhook(['calls', 'export'], env)).stdout;
    expect(jsonl).toBe(`${JSON.stringify(stored)}\n`);
    expect(JSON.parse(jsonl).received_at).toBe('2026-11-27T08:15:00.000Z');
  });

  it('writes CSV a spreadsheet opens as written: a BOM, extra columns, formulas neutralised, numbers kept', async () => {
    const dataDir = tempDir();
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const at = Date.parse('2026-11-20T10:00:00.000Z');
    let second = 0;
    const commit = async (data: Record<string, string | number>, extra: Record<string, unknown>) => {
      // A second apart, so the export's id order is the order they were committed in.
      const input = commitInput('end-of-call', `call_id:${unique('c')}`, [], at + 1000 * second++);
      input.record.data = data;
      input.record.extra = extra;
      await store.commitCall(input);
    };
    await commit(
      { first_name: 'Aśha', phone_number: '+919812345678', amount: -250 },
      { campaign: '=HYPERLINK("http://evil","x")' },
    );
    await commit({ first_name: '@Ravi, Jr.', summary: '-2+3' }, { tags: ['vip'], agent: '\tA7' });
    await store.close();

    const { stdout } = await runCallhook(['calls', 'export', '--format', 'csv'], { CALLHOOK_DATA_DIR: dataDir });
    expect(stdout.startsWith('\uFEFFid,')).toBe(true);
    const [header, asha, ravi] = stdout.slice(1).split('\r\n');
    expect(header).toBe(
      'id,hook,dedup_key,received_at,source,first_name,phone_number,amount,summary,extra.campaign,extra.tags,extra.agent,problems',
    );
    expect(asha).toMatch(/,webhook,Aśha,'\+919812345678,-250,,"'=HYPERLINK\(""http:\/\/evil"",""x""\)",,,$/);
    expect(ravi).toMatch(/,webhook,"'@Ravi, Jr\.",,,'-2\+3,,"\[""vip""\]",'\tA7,$/);
  });
});

describe('callhook replay', () => {
  it('exits 1 and says what differs when a reply does not match the fixture', async () => {
    const server = await startServer();
    const dir = tempDir();
    writeFileSync(
      join(dir, 'wrong.json'),
      JSON.stringify({
        description: 'expects a 401 that will not come',
        request: { method: 'POST', encoding: 'json', body: sampleCall() },
        expect: { status: 401 },
      }),
    );
    writeFileSync(
      join(dir, 'right.json'),
      JSON.stringify({
        description: 'accepted',
        request: { method: 'POST', encoding: 'json', body: sampleCall() },
        expect: { status: 200, reply: { status: 'accepted' } },
      }),
    );
    // `data` is compared exactly: a fixture that lists only some fields fails.
    writeFileSync(
      join(dir, 'some-data.json'),
      JSON.stringify({
        description: 'partial data',
        request: { method: 'POST', encoding: 'json', body: sampleCall() },
        expect: { status: 200, data: { first_name: 'Asha' } },
      }),
    );
    const { code, stdout } = await runCallhook(
      ['replay', dir, '--url', server.url, '--key', KEY, '--admin-token', ADMIN],
      { CALLHOOK_DATA_DIR: server.dataDir },
    );
    await server.close();
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ok {3}.*right\.json/m);
    expect(stdout).toMatch(/^FAIL .*wrong\.json/m);
    expect(stdout).toMatch(/status: expected 401, got 200/);
    expect(stdout).toMatch(/data: expected \{"first_name":"Asha"\}, stored \{"first_name":"Asha",/);
    expect(stdout.trim().split('\n').at(-1)).toBe('1 passed, 2 failed');
  });

  it("prints each reply, and what it stores says source replay where a sender's call says webhook", async () => {
    const server = await startServer();
    const dir = tempDir();
    writeFileSync(
      join(dir, 'one.json'),
      JSON.stringify({
        description: 'accepted',
        request: { method: 'POST', encoding: 'json', body: sampleCall() },
        expect: { status: 200 },
      }),
    );
    const { code, stdout } = await runCallhook(['replay', dir, '--url', server.url, '--key', KEY], {
      CALLHOOK_DATA_DIR: server.dataDir,
    });
    const line = stdout.split('\n').find((l) => l.includes('one.json'))!;
    const reply = JSON.parse(line.slice(line.indexOf('{'))) as {
      status: string;
      id: string;
      dedup_key: string;
      problems: unknown[];
    };
    expect(reply).toMatchObject({ status: 'accepted', dedup_key: expect.stringMatching(/^call_id:/), problems: [] });
    const live = (await (await post(server.url, sampleCall())).json()) as { id: string };
    const source = async (id: string) => {
      const res = await fetch(`${server.url}/admin/calls/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      return ((await res.json()) as { record: { source: string } }).record.source;
    };
    expect(await source(reply.id)).toBe('replay');
    expect(await source(live.id)).toBe('webhook');
    await server.close();
    expect(code).toBe(0);
  });

  it('exits non-zero with one line for a fixture that is not valid', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ request: { method: 'POST' }, expect: { status: 200 } }));
    const { code, stderr } = await runCallhook(['replay', dir], { CALLHOOK_DATA_DIR: dir });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^callhook: .*bad\.json: description/);
  });
});

describe('callhook purge', () => {
  it('deletes nothing younger than the age, and refuses an age it cannot read', async () => {
    const server = await startServer();
    await post(server.url, sampleCall());
    await server.close();
    const env = { CALLHOOK_DATA_DIR: server.dataDir };
    const kept = await runCallhook(['purge', '--older-than', '90d'], env);
    expect(kept.stdout).toMatch(/^purged 0 calls and 0 receipts received before \d{4}-/);
    const bad = await runCallhook(['purge', '--older-than', 'ninety days'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'callhook: --older-than: "ninety days" is not a duration: a number and a unit ms, s, m, h, d or w, several in a row (90d, 1h30m)\n',
    );
    expect((await runCallhook(['purge', '--older-than', '1h30m'], env)).stdout).toMatch(
      /^purged 0 calls and 0 receipts received before \d{4}-/,
    );
    expect((await runCallhook(['calls', 'list'], env)).stdout.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a bare number of --older-than with the fix, and deletes nothing (docs/reference.md#durations)', async () => {
    const { env, dataDir } = await purgeable();
    const stored = () =>
      readStoreFile(dataDir, (db) =>
        db.prepare('SELECT (SELECT count(*) FROM calls) AS calls, (SELECT count(*) FROM receipts) AS receipts').get(),
      );
    const before = stored();
    expect(before).toEqual({ calls: 4, receipts: 5 });
    // 90 read as milliseconds would be every call here but the held and the owed one, off a terminal without asking.
    for (const args of [
      ['--older-than', '90'],
      ['--older-than', '90', '--dry-run'],
      ['--older-than=90', '--yes'],
    ]) {
      const refused = await runCallhook(['purge', ...args], env);
      expect(refused, args.join(' ')).toEqual({
        code: 2,
        stdout: '',
        stderr: 'callhook: --older-than 90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds\n',
      });
    }
    expect(stored()).toEqual(before);
    // Written with its unit, it purges what it says: 90 minutes takes the call delivered two hours ago.
    expect((await runCallhook(['purge', '--older-than', '90m'], env)).stdout).toMatch(
      /^purged 1 calls and 1 receipts /,
    );
  });

  /**
   * A store with, two hours old: a delivered call, a held one, one still owed to a sink, a refused request; and a new
   * call.
   */
  async function purgeable(): Promise<{
    env: Record<string, string>;
    dataDir: string;
    ids: Record<'done' | 'held' | 'owed' | 'young', string>;
  }> {
    const dataDir = tempDir();
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const old = Date.now() - 2 * 3_600_000;
    let n = 0;
    // A second apart, so `calls list` shows them in the order written here.
    const commit = async (
      name: string,
      sinks: string[],
      status: 'accepted' | 'held' = 'accepted',
      at = old + 1000 * n++,
    ) => (await store.commitCall({ ...commitInput('end-of-call', `call_id:${name}`, sinks, at), status })).id;
    const ids = {
      done: await commit('done', ['crm']),
      held: await commit('held', [], 'held'),
      owed: await commit('owed', ['crm']),
      young: await commit('young', [], 'accepted', Date.now()),
    };
    const [first] = await store.claimDeliveries('crm', 1, 60_000);
    await store.finishAttempt(first!.id, first!.attempt, attemptOk);
    await store.recordRejection({
      hook: 'end-of-call',
      receivedAt: new Date(old).toISOString(),
      method: 'POST',
      contentType: 'application/json',
      size: 1,
      status: 400,
      outcome: 'rejected',
      error: 'invalid JSON',
      rawBody: new Uint8Array([0x7b]),
    });
    await store.close();
    return { env: { CALLHOOK_DATA_DIR: dataDir }, dataDir, ids };
  }
  const listed = async (env: Record<string, string>) =>
    (await runCallhook(['calls', 'list', '--order', 'asc'], env)).stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t')[0]);

  it('prints in a dry run what it deletes, deletes it without asking off a terminal, and keeps what is owed (1h30m reads as the config reads it)', async () => {
    const { env, ids } = await purgeable();
    const dry = await runCallhook(['purge', '--older-than', '1h30m', '--dry-run'], env);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toMatch(/^would purge 1 calls and 1 receipts received before \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    expect(await listed(env)).toEqual([ids.done, ids.held, ids.owed, ids.young]);

    const purged = await runCallhook(['purge', '--older-than', '1h30m'], env);
    expect(purged).toMatchObject({ code: 0, stderr: '' });
    expect(purged.stdout).toMatch(/^purged 1 calls and 1 receipts received before /);
    expect(await listed(env)).toEqual([ids.held, ids.owed, ids.young]);

    // The refused request stayed: it is the only copy of a call the sender will not send again.
    expect(
      (await runCallhook(['purge', '--older-than', '1h30m', '--include-refused', '--dry-run'], env)).stdout,
    ).toMatch(/^would purge 0 calls and 1 receipts /);
    expect((await runCallhook(['purge', '--older-than', '1h30m', '--include-refused'], env)).stdout).toMatch(
      /^purged 0 calls and 1 receipts /,
    );
    expect((await runCallhook(['purge', '--older-than', '1h30m', '--include-refused'], env)).stdout).toMatch(
      /^purged 0 calls and 0 receipts /,
    );
    expect(await listed(env)).toEqual([ids.held, ids.owed, ids.young]);
  });

  it.skipIf(!hasScript())(
    'asks on a terminal, showing the counts, and deletes only on yes',
    async () => {
      const { env, ids } = await purgeable();
      const no = await callhookOnTerminal(['purge', '--older-than', '90m'], 'n\n', env);
      expect(no.code).toBe(1);
      expect(no.stdout).toMatch(/callhook: delete 1 calls and 1 receipts received before \d{4}-[\d:.T-]+Z\? \[y\/N\] /);
      expect(no.stdout).toContain('callhook: nothing deleted');
      expect(await listed(env)).toEqual([ids.done, ids.held, ids.owed, ids.young]);

      const yes = await callhookOnTerminal(['purge', '--older-than', '90m'], 'y\n', env);
      expect(yes.code).toBe(0);
      expect(yes.stdout).toMatch(/purged 1 calls and 1 receipts received before /);
      expect(await listed(env)).toEqual([ids.held, ids.owed, ids.young]);

      // --yes does not ask; nor does a run with nothing to delete.
      const again = await purgeable();
      const asked = await callhookOnTerminal(['purge', '--older-than', '90m', '--yes'], '', again.env);
      expect(asked.code).toBe(0);
      expect(asked.stdout).not.toContain('[y/N]');
      expect(asked.stdout).toMatch(/purged 1 calls and 1 receipts /);
      const nothing = await callhookOnTerminal(['purge', '--older-than', '90m'], '', again.env);
      expect(nothing.stdout).not.toContain('[y/N]');
      expect(nothing.stdout).toMatch(/purged 0 calls and 0 receipts /);
    },
    90_000,
  );

  /**
   * A store with, two hours old: a real call, a test call delivered, one still owed to a sink, one held, a refused
   * request; and a test call just in. Test calls come from `callhook replay` and `callhook simulate`.
   */
  async function withTestTraffic() {
    const dataDir = tempDir();
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const old = Date.now() - 2 * 3_600_000;
    let n = 0;
    const commit = async (
      name: string,
      source: RecordSource,
      sinks: string[],
      status: 'accepted' | 'held' = 'accepted',
      at = old + 1000 * n++,
    ) => {
      const input = { ...commitInput('end-of-call', `call_id:${name}`, sinks, at), status };
      input.record.source = source;
      return (await store.commitCall(input)).id;
    };
    const ids = {
      real: await commit('real', 'webhook', []),
      delivered: await commit('delivered', 'replay', ['crm']),
      owed: await commit('owed', 'replay', ['crm']),
      held: await commit('held', 'simulate', [], 'held'),
      young: await commit('young', 'simulate', [], 'accepted', Date.now()),
    };
    const [first] = await store.claimDeliveries('crm', 1, 60_000);
    await store.finishAttempt(first!.id, first!.attempt, attemptOk);
    await store.recordRejection({
      hook: 'end-of-call',
      receivedAt: new Date(old).toISOString(),
      method: 'POST',
      contentType: 'application/json',
      size: 1,
      status: 400,
      outcome: 'rejected',
      error: 'invalid JSON',
      rawBody: new Uint8Array([0x7b]),
    });
    await store.close();
    const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
    /** The calls left, by name, and the count of receipts, read from the file as another process would. */
    const left = () =>
      readStoreFile(dataDir, (db) => ({
        calls: (db.prepare('SELECT id FROM calls ORDER BY rowid').pluck().all() as string[]).map((id) => names.get(id)),
        receipts: db.prepare('SELECT count(*) FROM receipts').pluck().get(),
      }));
    return { env: { CALLHOOK_DATA_DIR: dataDir }, left };
  }

  it('removes test traffic by --source whatever its age, held or owed, and never a real call (docs/reference.md#command-line)', async () => {
    const { env, left } = await withTestTraffic();
    const everything = { calls: ['real', 'delivered', 'owed', 'held', 'young'], receipts: 6 };
    expect(left()).toEqual(everything);

    for (const [args, line] of [
      [[], 'name what to purge: --older-than AGE (such as 90d), --source replay,simulate, or both'],
      [
        ['--source', 'webhook'],
        '--source webhook: purge takes only test traffic (replay, simulate); real calls go by age, with --older-than',
      ],
      [
        ['--source', 'replay,reconcile', '--dry-run'],
        '--source reconcile: purge takes only test traffic (replay, simulate); real calls go by age, with --older-than',
      ],
      [['--source', 'tests'], '--source "tests" is not a source: purge takes replay and simulate'],
      [
        ['--source', 'replay', '--include-refused'],
        '--include-refused goes with --older-than alone: a refused request has no source',
      ],
      [
        ['--source', 'replay', '--older-than', '2'],
        '--older-than 2 has no unit: write 2d for 2 days, or 2ms for 2 milliseconds',
      ],
    ] as const) {
      expect(await runCallhook(['purge', ...args], env), args.join(' ')).toEqual({
        code: 2,
        stdout: '',
        stderr: `callhook: ${line}\n`,
      });
    }
    expect(left()).toEqual(everything);

    // With --older-than, both apply: the old test calls, delivered, owed or held, with their receipts.
    const both = ['purge', '--source', 'replay,simulate', '--older-than', '1h30m'];
    const dry = await runCallhook([...both, '--dry-run'], env);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout).toMatch(
      /^would purge 3 calls and 3 receipts of source replay, simulate received before \d{4}-[\d:.T-]+Z\n$/,
    );
    expect(left()).toEqual(everything);
    expect((await runCallhook(both, env)).stdout).toMatch(/^purged 3 calls and 3 receipts of source replay, simulate /);
    expect(left()).toEqual({ calls: ['real', 'young'], receipts: 3 });

    // Without it, whatever the age; the source repeated reads as the list.
    const any = ['purge', '--source', 'simulate', '--source', 'replay'];
    expect((await runCallhook([...any, '--dry-run'], env)).stdout).toBe(
      'would purge 1 calls and 1 receipts of source simulate, replay\n',
    );
    expect(await runCallhook(any, env)).toEqual({
      code: 0,
      stdout: 'purged 1 calls and 1 receipts of source simulate, replay\n',
      stderr: '',
    });
    // The real call stays, and so does the refused request: it has no source, and the age purge takes it.
    expect(left()).toEqual({ calls: ['real'], receipts: 2 });
  });

  it.skipIf(!hasScript())(
    'asks on a terminal before removing test traffic, as for age',
    async () => {
      const { env, left } = await withTestTraffic();
      const no = await callhookOnTerminal(['purge', '--source', 'replay,simulate'], 'n\n', env);
      expect(no.code).toBe(1);
      expect(no.stdout).toMatch(/callhook: delete 4 calls and 4 receipts of source replay, simulate\? \[y\/N\] /);
      expect(left().calls).toEqual(['real', 'delivered', 'owed', 'held', 'young']);
      const yes = await callhookOnTerminal(['purge', '--source', 'replay,simulate'], 'y\n', env);
      expect(yes.code).toBe(0);
      expect(yes.stdout).toMatch(/purged 4 calls and 4 receipts of source replay, simulate/);
      expect(left().calls).toEqual(['real']);
    },
    60_000,
  );
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** util-linux `script`, which gives a command a terminal; the test that needs one is skipped without it. */
function hasScript(): boolean {
  return spawnSync('script', ['--version']).status === 0;
}

describe('callhook backup', () => {
  it('copies the SQLite store whole while serve keeps committing calls: every call acknowledged before, each one intact', async () => {
    const server = await startServer();
    const acknowledged: string[] = [];
    let posting = true;
    // Summaries of 25 kB make a store of over 5 MB before the backup starts: more than one step of the copy (1024
    // pages), so a call committed between two steps makes SQLite start the copy again, as it does under real traffic.
    const summary = 'Ordered two kettles. '.repeat(1200);
    const poster = (async () => {
      while (posting) {
        const reply = await post(
          server.url,
          sampleCall({ first_name: `Caller ${acknowledged.length}`, call_summary: summary }),
        );
        expect(reply.status).toBe(200);
        acknowledged.push(((await reply.json()) as { id: string }).id);
      }
    })();
    const copy = join(tempDir(), 'callhook-backup.db');
    try {
      await until(() => acknowledged.length >= 200, { timeoutMs: 30_000 });
      const before = [...acknowledged];
      const backup = await runCallhook(['backup', copy], { CALLHOOK_DATA_DIR: server.dataDir });
      const during = acknowledged.length - before.length;
      expect(backup.stderr).toBe('');
      expect(backup.code).toBe(0);
      expect(backup.stdout).toMatch(new RegExp(`^backed up \\d+ calls to ${copy} \\(\\d+ bytes\\)\n$`));
      // Calls kept arriving while it copied: the copy is of a store being written.
      await until(() => acknowledged.length > before.length + during + 5);
      posting = false;
      await poster;

      expect(statSync(copy).mode & 0o777).toBe(0o600);
      const db = new Database(copy, { readonly: true, fileMustExist: true });
      let copied: { id: string; record: string }[];
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.pragma('foreign_key_check')).toEqual([]);
        expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
        copied = db.prepare('SELECT id, record FROM calls').all() as typeof copied;
      } finally {
        db.close();
      }
      expect(backup.stdout).toContain(`backed up ${copied.length} calls`);
      const ids = new Set(copied.map((c) => c.id));
      expect(before.filter((id) => !ids.has(id))).toEqual([]);
      // Each call in the copy is the call the store holds, byte for byte.
      const live = readStoreFile(server.dataDir, (store) => {
        const record = store.prepare('SELECT record FROM calls WHERE id = ?').pluck();
        return new Map(copied.map((c) => [c.id, record.get(c.id) as string]));
      });
      for (const c of copied) expect(c.record, c.id).toBe(live.get(c.id));
      expect(copied.every((c) => (JSON.parse(c.record) as { id: string }).id === c.id)).toBe(true);

      // Restored as docs/deploying.md says, the copy put back as a data dir's callhook.db: serve reads it as it was.
      const restoredDir = tempDir();
      copyFileSync(copy, join(restoredDir, SQLITE_FILE));
      const restored = await startServer({ dataDir: restoredDir });
      try {
        const headers = { authorization: `Bearer ${ADMIN}` };
        const first = await fetch(`${restored.url}/admin/calls/${before[0]}`, { headers });
        expect(first.status).toBe(200);
        expect(((await first.json()) as { record: { id: string; data: unknown } }).record).toEqual(
          JSON.parse(copied.find((c) => c.id === before[0])!.record),
        );
      } finally {
        await restored.close();
      }
    } finally {
      posting = false;
      await poster.catch(() => {});
      await server.close();
    }
  }, 60_000);

  it('never replaces a file without --force, and says to use pg_dump with DATABASE_URL, in one line', async () => {
    const server = await startServer();
    await post(server.url, sampleCall());
    await server.close();
    const env = { CALLHOOK_DATA_DIR: server.dataDir };
    const dir = tempDir();
    const taken = join(dir, 'taken.db');
    writeFileSync(taken, 'keep me');
    expect(await runCallhook(['backup', taken], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: `callhook: ${taken} exists: name another file, or --force to replace it\n`,
    });
    expect(readFileSync(taken, 'utf8')).toBe('keep me');
    expect(readdirSync(dir)).toEqual(['taken.db']);
    const forced = await runCallhook(['backup', taken, '--force'], env);
    expect(forced).toEqual({
      code: 0,
      stdout: `backed up 1 calls to ${taken} (${statSync(taken).size} bytes)\n`,
      stderr: '',
    });
    expect(statSync(taken).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['taken.db']);

    const postgres = await runCallhook(['backup', join(dir, 'pg.dump')], {
      ...env,
      DATABASE_URL: 'postgres://callhook:secret-password@127.0.0.1:1/callhook',
    });
    expect(postgres).toEqual({
      code: 2,
      stdout: '',
      stderr: `callhook: backup copies a SQLite store, and this one is PostgreSQL (DATABASE_URL): use pg_dump, such as pg_dump --format=custom --file=${join(dir, 'pg.dump')} "$DATABASE_URL"\n`,
    });
    expect(await runCallhook(['backup', join(dir, 'none.db')], { CALLHOOK_DATA_DIR: tempDir() })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^callhook: no store at .*callhook\.db: nothing to back up\n$/),
    });
    expect(readdirSync(dir)).toEqual(['taken.db']);
  });

  it.skipIf(!hasScript())(
    'shows its progress on a terminal, and clears it before the result',
    async () => {
      const server = await startServer();
      await post(server.url, sampleCall());
      await server.close();
      const copy = join(tempDir(), 'copy.db');
      const shown = await callhookOnTerminal(['backup', copy], '', { CALLHOOK_DATA_DIR: server.dataDir });
      expect(shown.code).toBe(0);
      // The line is redrawn after `\r` and an erase to its end (ESC [K), and erased so before the result.
      const erase = '\r\u001b[K';
      expect(shown.stdout).toMatch(new RegExp(`${escapeRegExp(erase)}backup: \\d+%`));
      expect(shown.stdout).toContain(`${erase}backed up 1 calls to `);
    },
    60_000,
  );
});

describe('bad input', () => {
  // In a process of its own: commander's usage errors through the real entry.
  it('gives one line and a non-zero exit for an unknown command or option', async () => {
    for (const args of [['frobnicate'], ['calls', 'list', '--bogus']]) {
      const { code, stderr } = await callhook(args);
      expect(code, args.join(' ')).not.toBe(0);
      expect(stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});

describe('callhook serve', () => {
  it('started a second time on a port in use, says so in one line, exits non-zero and leaves the first one serving', async () => {
    const first = await startServer();
    try {
      const env = {
        PORT: String(first.port),
        HOST: '127.0.0.1',
        CALLHOOK_DATA_DIR: first.dataDir,
        CALLHOOK_API_KEYS: KEY,
        CALLHOOK_ADMIN_TOKEN: ADMIN,
      };
      const { code, stderr } = await callhook(['serve'], env);
      expect(code).toBe(2);
      expect(stderr.trim().split('\n')).toEqual([
        `callhook: cannot listen on 127.0.0.1:${first.port}: the port is in use (by another callhook serve?); set PORT to another one`,
      ]);
      const reply = await post(first.url, sampleCall({ call_id: 'after-second-start' }));
      expect(await reply.json()).toMatchObject({ status: 'accepted' });
    } finally {
      await first.close();
    }
  });
});

describe('callhook deliveries, and calls release with no serve', () => {
  it('list dead deliveries and retry them; a release with no serve running changes nothing and says so in one line', async () => {
    const receiver = await startReceiver((_req, res) => res.writeHead(400).end('no'));
    const server = await startServer({
      config: {
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [{ name: 'crm', type: 'http', url: receiver.url }],
      },
    });
    const accepted = (await (await post(server.url, sampleCall())).json()).id;
    const held = (await (await post(server.url, sampleCall({ call_outcome: '' }))).json()).id;
    await until(() => receiver.received.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    await receiver.close();
    const env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_CONFIG: join(server.dataDir, 'config.json') };

    const dead = await runCallhook(['deliveries', 'list', '--state', 'dead'], env);
    const [row] = dead.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(row).toEqual([expect.stringMatching(/^\d+$/), accepted, 'crm', 'dead', '1', '', 'HTTP 400: no']);
    expect((await runCallhook(['deliveries', 'retry', '--sink', 'crm'], env)).stdout).toBe('retried 1 delivery\n');
    expect((await runCallhook(['deliveries', 'list', '--state', 'pending'], env)).stdout).toMatch(
      new RegExp(`^${row![0]}\\t${accepted}\\tcrm\\tpending\\t0\\t\\d{4}-`),
    );
    expect((await runCallhook(['deliveries', 'list', '--state', 'lost'], env)).code).not.toBe(0);

    // Changing a call asks the running serve (docs/reference.md#operating): with none, one line and a non-zero exit.
    const port = await closedPort();
    const none = await runCallhook(['calls', 'release', held, '--url', `http://127.0.0.1:${port}`], {
      ...env,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(
      new RegExp(
        `^callhook: no callhook serve answers at http://127\\.0\\.0\\.1:${port} \\(.*\\); start it, or pass --url\n$`,
      ),
    );
    expect((await runCallhook(['deliveries', 'list', '--call', held], env)).stdout).toBe('');
  });
});

describe('callhook calls release|redeliver and receipts through the running serve', () => {
  it("releases a held call to the sinks of the serve's config, run with no config of its own, and refuses a second release in one line", async () => {
    const crm = await startReceiver();
    const server = await startServer({
      config: {
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [
          { name: 'crm', type: 'http', url: crm.url },
          { name: 'jsonl', type: 'jsonl' },
        ],
      },
    });
    try {
      const held = (await (await post(server.url, sampleCall({ call_outcome: '' }))).json()).id as string;
      // Another machine's CLI: no config, no data dir; only the serve's address and the admin token.
      const env = { CALLHOOK_DATA_DIR: tempDir(), CALLHOOK_ADMIN_TOKEN: ADMIN };
      const released = await runCallhook(['calls', 'release', held, '--url', server.url], env);
      expect(released).toMatchObject({ code: 0, stdout: `released ${held} to crm, jsonl\n`, stderr: '' });
      await until(() => crm.received.some((r) => JSON.parse(r.body).id === held));
      await until(() => jsonlRecords(server.dataDir).some((r) => r.id === held));

      const again = await runCallhook(['calls', 'release', held, '--url', server.url], env);
      expect(again.code).toBe(2);
      expect(again.stderr).toBe(`callhook: serve at ${server.url} answered 409: Conflict: call ${held} is not held\n`);

      const redelivered = await runCallhook(['calls', 'redeliver', held, '--sink', 'crm', '--url', server.url], env);
      expect(redelivered).toMatchObject({ code: 0, stdout: `redelivering ${held} to 1 of 1 sink: crm\n` });
      await until(() => crm.received.filter((r) => JSON.parse(r.body).id === held).length === 2);
      const unknown = await runCallhook(['calls', 'redeliver', held, '--sink', 'nowhere', '--url', server.url], env);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(
        /^callhook: serve at .* answered 400: Bad request: no sink is named nowhere \(sinks: crm, jsonl\)\n$/,
      );
    } finally {
      await server.close();
      await crm.close();
    }
  });

  it('edits a call through the running serve, printing what changed and the new revision, and refuses in one line', async () => {
    const server = await startServer({ config: { hooks: { 'end-of-call': { on_problem: 'hold' } } } });
    try {
      const held = (await (await post(server.url, sampleCall({ first_name: '', email_address: 'asha@' }))).json())
        .id as string;
      const env = { CALLHOOK_DATA_DIR: tempDir(), CALLHOOK_ADMIN_TOKEN: ADMIN };
      const edited = await runCallhook(
        [
          'calls',
          'edit',
          held,
          '--set',
          'first_name=Asha',
          '--set',
          'email_address=',
          '--set',
          'call_date=31/02/2026',
          '--url',
          server.url,
        ],
        env,
      );
      expect(edited).toMatchObject({ code: 0, stderr: '' });
      expect(edited.stdout).toBe(
        `edited ${held}: revision 2\n  first_name: (none) -> "Asha"\n  email_address: "asha@" -> (none)\n  call_date: "2026-11-21" -> "31/02/2026"\nproblems: call_date invalid_format\n`,
      );
      const refused = await runCallhook(['calls', 'edit', held, '--set', 'colour=red', '--url', server.url], env);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /^callhook: serve at .* answered 400: Bad request: data\.colour: not a parameter of the hook end-of-call \(parameters: .*\)\n$/,
      );
      const port = await closedPort();
      const none = await runCallhook(
        ['calls', 'edit', held, '--set', 'first_name=A', '--url', `http://127.0.0.1:${port}`],
        env,
      );
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/^callhook: no callhook serve answers at .*; start it, or pass --url\n$/);
      const shown = (await (
        await fetch(`${server.url}/admin/calls/${held}`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).json()) as { record: { revision: number }; edits: unknown[] };
      expect(shown.record.revision).toBe(2);
      expect(shown.edits).toHaveLength(1);
      const queue = await runCallhook(['calls', 'list', '--review'], { CALLHOOK_DATA_DIR: server.dataDir });
      expect(queue.stdout.split('\t')[0]).toBe(held);
    } finally {
      await server.close();
    }
  });

  it('lists refused requests and ingests one with a corrected body from a file', async () => {
    const server = await startServer();
    try {
      const broken = await fetch(`${server.url}/webhooks/end-of-call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{"call_id": "cli-lost-1", ',
      });
      expect(broken.status).toBe(400);
      const env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_ADMIN_TOKEN: ADMIN };
      const listed = await runCallhook(['receipts', 'list', '--rejected'], env);
      const [line] = listed.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t'));
      expect(line).toEqual([
        expect.stringMatching(/^\d+$/),
        expect.stringMatching(/^\d{4}-/),
        'end-of-call',
        '400',
        'rejected',
        '',
        expect.stringMatching(/cannot be parsed/),
      ]);
      const file = join(tempDir(), 'fixed.json');
      writeFileSync(file, '{"call_id": "cli-lost-1", "first_name": "Asha"}');
      const ingested = await runCallhook(['receipts', 'ingest', line![0]!, '--body', file, '--url', server.url], env);
      expect(ingested.stderr).toBe('');
      const [, id] = /^receipt \d+ ingested: accepted (\S+); problems: /.exec(ingested.stdout) ?? [];
      expect(id).toBeDefined();
      const after = await runCallhook(['receipts', 'list', '--rejected'], env);
      expect(after.stdout.split('\t')[5]).toBe(`ingested as ${id}`);
      const shown = JSON.parse((await runCallhook(['calls', 'show', id!], env)).stdout);
      expect(shown.record).toMatchObject({
        source: 'recovered',
        extra: { call_id: 'cli-lost-1' },
        data: { first_name: 'Asha' },
      });
    } finally {
      await server.close();
    }
  });

  it('ingests a refused request with the corrected body read from standard input (--body -)', async () => {
    const server = await startServer();
    try {
      const broken = await fetch(`${server.url}/webhooks/end-of-call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: '{"call_id": "cli-lost-2", ',
      });
      expect(broken.status).toBe(400);
      const env = { CALLHOOK_DATA_DIR: server.dataDir, CALLHOOK_ADMIN_TOKEN: ADMIN };
      const [receipt] = (await runCallhook(['receipts', 'list', '--rejected'], env)).stdout.split('\t');
      const ingested = await runCallhook(['receipts', 'ingest', receipt!, '--body', '-', '--url', server.url], env, {
        stdin: '{"call_id": "cli-lost-2", "first_name": "Ravi"}',
      });
      expect(ingested).toMatchObject({ code: 0, stderr: '' });
      const [, id] = /^receipt \d+ ingested: accepted (\S+); problems: /.exec(ingested.stdout) ?? [];
      const shown = JSON.parse((await runCallhook(['calls', 'show', id!], env)).stdout);
      expect(shown.record).toMatchObject({
        source: 'recovered',
        extra: { call_id: 'cli-lost-2' },
        data: { first_name: 'Ravi' },
      });
    } finally {
      await server.close();
    }
  });
});
