import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers/server.js';
import { ConfigError, loadConfig } from './config.js';
import { RECOMMENDED_PARAMETERS } from './normalize/index.js';
import { secretValues } from './secret-values.js';
import { maskSecrets } from './secrets.js';
import { resolveSinks } from './sinks/registry.js';

const file = (content: string, name = 'callhook.yaml') => {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
};

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8787,
      host: '0.0.0.0',
      logLevel: 'info',
      apiKeys: [],
      phoneRegion: 'IN',
      bodyLimit: 1024 * 1024,
      shutdownGraceMs: 10_000,
    });
    expect(config.dataDir).toMatch(/\/data$/);
    expect([...config.hooks.keys()]).toEqual(['end-of-call']);
    const hook = config.hooks.get('end-of-call')!;
    expect(hook).toMatchObject({
      dedup: ['call_id', 'recording_url'],
      on_conflict: 'keep',
      on_problem: 'deliver',
      sinks: ['log', 'jsonl'],
      allow_files: false,
    });
    expect(hook.parameters).toEqual(RECOMMENDED_PARAMETERS);
    expect(config.sinks.map((s) => s.type)).toEqual(['log', 'jsonl']);
  });

  it('takes environment variables over the file', () => {
    const path = file('port: 9000\nhost: 127.0.0.1\nlog_level: debug\n');
    const config = loadConfig(
      { PORT: '9100', CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa, key-bbbbbbbbbbbbbbbb', LOG_LEVEL: 'warn' },
      path,
    );
    expect(config).toMatchObject({
      port: 9100,
      host: '127.0.0.1',
      logLevel: 'warn',
      apiKeys: ['key-aaaaaaaaaaaaaaaa', 'key-bbbbbbbbbbbbbbbb'],
    });
  });

  it('reads hooks declared like the dashboard rows, in YAML or JSON', () => {
    const yaml = file(`
hooks:
  order-update:
    parameters:
      - { identifier: order_id, type: string, required: true, description: Order referenced }
      - { identifier: paid, type: boolean }
      - { identifier: channel, type: string, format: enum, values: [phone, whatsapp] }
    dedup: [order_id]
    on_problem: hold
    keys: ['\${HOOK_KEY}']
`);
    const config = loadConfig({ HOOK_KEY: 'hook-key-0123456789abcdef' }, yaml);
    const hook = config.hooks.get('order-update')!;
    expect(hook.parameters.map((p) => p.identifier)).toEqual(['order_id', 'paid', 'channel']);
    expect(hook).toMatchObject({ dedup: ['order_id'], on_problem: 'hold', keys: ['hook-key-0123456789abcdef'] });
    expect(secretValues(config, [])).toContain('hook-key-0123456789abcdef');
    const json = file(JSON.stringify({ hooks: { 'end-of-call': { dedup: ['order_id'] } } }), 'c.json');
    expect(loadConfig({}, json).hooks.get('end-of-call')!.parameters).toEqual(RECOMMENDED_PARAMETERS);
  });

  it('keeps end-of-call beside the hooks the file declares (docs/reference.md#receiving: "more hooks")', () => {
    const config = loadConfig({}, file('hooks:\n  order-update:\n    dedup: [order_id]\n'));
    expect([...config.hooks.keys()]).toEqual(['end-of-call', 'order-update']);
    expect(config.hooks.get('end-of-call')!).toMatchObject({
      dedup: ['call_id', 'recording_url'],
      parameters: RECOMMENDED_PARAMETERS,
    });
  });

  it('reads composite dedup entries and on_conflict, and warns of a dedup field the hook does not declare (docs/reference.md#deduplication)', () => {
    const config = loadConfig(
      {},
      file(
        'hooks:\n  orders:\n    dedup: [[phone_number, call_date], order_id, ticket_id]\n    on_conflict: duplicate\n',
      ),
    );
    expect(config.hooks.get('orders')!).toMatchObject({
      dedup: [['phone_number', 'call_date'], 'order_id', 'ticket_id'],
      on_conflict: 'duplicate',
    });
    expect(config.warnings).toEqual([
      expect.stringMatching(/^hooks\.orders\.dedup: "ticket_id" is not a declared parameter/),
    ]);
    // The default keys name call_id, which the recommended parameters do not declare: no warning for them.
    expect(loadConfig({}).warnings).toEqual([]);
    expect(() => loadConfig({}, file('hooks:\n  orders:\n    on_conflict: merge\n'))).toThrow(
      /hooks\.orders\.on_conflict/,
    );
    expect(() => loadConfig({}, file('hooks:\n  orders:\n    dedup: [[]]\n'))).toThrow(/hooks\.orders\.dedup/);
  });

  it('reads numeric dates day first unless date_order says MDY (docs/reference.md#normalising)', () => {
    expect(loadConfig({}).dateOrder).toBe('DMY');
    expect(loadConfig({}, file('date_order: MDY\n')).dateOrder).toBe('MDY');
    expect(loadConfig({}, file('date_order: DMY\n')).dateOrder).toBe('DMY');
    expect(() => loadConfig({}, file('date_order: YMD\n'))).toThrow(/date_order: .*"DMY"\|"MDY"/);
    expect(() => loadConfig({}, file('date_order: dmy\n'))).toThrow(/date_order: /);
  });

  it('accepts a short key but warns where it is set, never what it is', () => {
    const path = file('hooks:\n  orders:\n    keys: [hookkey1]\nadmin_token: admin-token-0123456789\n');
    const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key, key-bbbbbbbbbbbbbbbb' }, path);
    expect(config.apiKeys).toEqual(['test-key', 'key-bbbbbbbbbbbbbbbb']);
    expect(config.warnings).toHaveLength(2);
    expect(config.warnings[0]).toMatch(/^CALLHOOK_API_KEYS: a key shorter than 16 characters can be guessed/);
    expect(config.warnings[1]).toMatch(/^hooks\.orders\.keys: /);
    for (const warning of config.warnings) expect(warning).not.toMatch(/test-key|hookkey1/);
    expect(loadConfig({ CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa', CALLHOOK_ADMIN_TOKEN: 'admin' }).warnings).toEqual([
      expect.stringMatching(/^CALLHOOK_ADMIN_TOKEN: /),
    ]);
    expect(loadConfig({ CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa' }).warnings).toEqual([]);
  });

  it('reads shutdown_grace in the duration grammar (docs/reference.md#shutdown)', () => {
    expect(loadConfig({}, file('shutdown_grace: 1.5s\n')).shutdownGraceMs).toBe(1_500);
    expect(() => loadConfig({}, file('shutdown_grace: soon\n'))).toThrow(/shutdown_grace/);
  });

  it('reads store_deadline, 8s by default, and refuses one the sender could not wait for (docs/reference.md#replies)', () => {
    expect(loadConfig({}).storeDeadlineMs).toBe(8_000);
    expect(loadConfig({}, file('store_deadline: 9.5s\n')).storeDeadlineMs).toBe(9_500);
    expect(loadConfig({}, file('store_deadline: 1s\n')).storeDeadlineMs).toBe(1_000);
    for (const text of ['12s', '10s', '500ms']) {
      let message = '';
      try {
        loadConfig({}, file(`store_deadline: ${text}\n`));
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/store_deadline: store_deadline must be at least 1s and less than 10s/);
      expect(message).not.toContain('\n');
    }
  });

  it('stops with a message that names the bad key', () => {
    const cases: [string, RegExp][] = [
      ['prot: 1\n', /prot: unknown key/],
      ['port: "eighty"\n', /port: /],
      ['hooks:\n  end-of-call:\n    on_problem: drop\n', /hooks\.end-of-call\.on_problem/],
      [
        'hooks:\n  end-of-call:\n    parameters:\n      - { identifier: Name, type: string }\n',
        /hooks\.end-of-call\.parameters\[0\]\.identifier/,
      ],
      [
        'hooks:\n  end-of-call:\n    parameters:\n      - { identifier: n, type: number, format: email }\n',
        /hooks\.end-of-call\.parameters\[0\]/,
      ],
      ['hooks:\n  end-of-call:\n    sinks: [nowhere]\n', /hooks\.end-of-call\.sinks: no sink is named "nowhere"/],
      ['api_keys: ["not a token"]\n', /api_keys\[0\]/],
      ['sinks:\n  - { name: a, type: log }\n  - { name: a, type: jsonl }\n', /"a" is used twice/],
      ['url: ${NOPE}\n', /url: environment variable NOPE is not set/],
      ['port: [1\n', /config file/],
    ];
    for (const [content, message] of cases) expect(() => loadConfig({}, file(content)), content).toThrow(message);
    expect(() => loadConfig({ PORT: 'x' })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({}, '/no/such/file.yaml')).toThrow(ConfigError);
  });

  it('never puts a key in an error message', () => {
    const bad = 'has spaces in it which is not a token';
    expect(() => loadConfig({ CALLHOOK_API_KEYS: bad })).toThrow(/CALLHOOK_API_KEYS/);
    try {
      loadConfig({ CALLHOOK_API_KEYS: bad });
    } catch (err) {
      expect((err as Error).message).not.toContain(bad);
    }
  });

  it('interpolates ${VAR} anywhere and keeps $${ literal', () => {
    const path = file('sinks:\n  - { name: out, type: jsonl, path: "${DIR}/calls-$${x}.jsonl" }\n');
    expect(loadConfig({ DIR: '/tmp/x' }, path).sinks[0]).toEqual({
      name: 'out',
      type: 'jsonl',
      path: '/tmp/x/calls-${x}.jsonl',
    });
  });

  it('refuses an unknown sink type listing the known ones, and a bad sink option naming it', async () => {
    await expect(resolveSinks([{ name: 'crm', type: 'salesforce' }])).rejects.toThrow(
      /unknown sink type "salesforce" \(known types: log, jsonl/,
    );
    await expect(resolveSinks([{ name: 'out', type: 'jsonl', paht: 'x' }])).rejects.toThrow(
      /sinks\[0\] \(out\)\.paht: unknown option/,
    );
    await expect(resolveSinks([{ name: 'out', type: 'log', level: 'loud' }])).rejects.toThrow(
      /sinks\[0\] \(out\)\.level/,
    );
  });

  it('collects secrets so they can be masked', () => {
    const path = file('sinks:\n  - { name: out, type: log }\n');
    const config = loadConfig(
      {
        CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa',
        CALLHOOK_ADMIN_TOKEN: 'admin-bbbbbbbbbbbbbbbb',
        DATABASE_URL: 'postgres://u:s3cr3t@db/x',
      },
      path,
    );
    expect(secretValues(config, [])).toEqual(
      expect.arrayContaining(['key-aaaaaaaaaaaaaaaa', 'admin-bbbbbbbbbbbbbbbb', 's3cr3t']),
    );
    expect(maskSecrets('postgres://u:s3cr3t@db/x key-aaaaaaaaaaaaaaaa', secretValues(config, []))).toBe(
      'postgres://u:***@db/x ***',
    );
  });

  it('reads the reconcile block, and keeps its API key a secret', () => {
    const path = file(
      'reconcile:\n  api_url: https://calls.example.com/api/v1\n  api_key: "${SERVICE_KEY}"\n  interval: 1h\n',
    );
    const config = loadConfig({ SERVICE_KEY: 'service-key-0123456789' }, path);
    expect(config.reconcile).toEqual({
      apiUrl: 'https://calls.example.com/api/v1',
      apiKey: 'service-key-0123456789',
      intervalMs: 3_600_000,
      hook: 'end-of-call',
      lookbackMs: 7 * 86_400_000,
    });
    expect(secretValues(config, [])).toContain('service-key-0123456789');
    expect(loadConfig({}).reconcile).toBeUndefined();
  });

  it('refuses a bad reconcile block, naming the key', () => {
    const load = (yaml: string) => () =>
      loadConfig({}, file(`reconcile:\n  api_url: https://calls.example.com/api/v1\n  api_key: k\n${yaml}`));
    expect(load('  interval: 10s\n')).toThrow('reconcile.interval: interval must be at least 1m');
    expect(load('  hook: orders\n')).toThrow('reconcile.hook: no hook is named "orders" (hooks: end-of-call)');
    expect(load('  every: 1h\n')).toThrow('reconcile.every: unknown key');
    expect(() => loadConfig({}, file('reconcile:\n  api_url: calls.example.com\n  api_key: k\n'))).toThrow(
      /reconcile\.api_url: api_url must be the http\(s\) base URL/,
    );
  });

  it('reads an in-call hook: phone_number by default, its handler beside the config file, a 2 s time-out', () => {
    const path = file(
      'hooks:\n  lookup:\n    kind: in-call\n  crm:\n    kind: in-call\n    handler: ./handlers/crm.mjs\n    handler_timeout: 500ms\n',
    );
    const config = loadConfig({}, path);
    expect(config.hooks.get('lookup')).toMatchObject({
      kind: 'in-call',
      sinks: [],
      handler: undefined,
      handlerTimeoutMs: 2000,
    });
    expect(config.hooks.get('lookup')!.parameters).toEqual([
      expect.objectContaining({ identifier: 'phone_number', type: 'string', required: true, format: 'e164' }),
    ]);
    expect(config.hooks.get('crm')).toMatchObject({
      handler: join(dirname(path), 'handlers', 'crm.mjs'),
      handlerTimeoutMs: 500,
    });
    expect(loadConfig({}).hooks.get('end-of-call')).toMatchObject({ kind: 'end-of-call', handler: undefined });
  });

  it('refuses on each kind of hook what only the other kind has, naming the key', () => {
    const load = (hook: string) => () => loadConfig({}, file(`hooks:\n  lookup:\n${hook}`));
    for (const key of [
      'sinks: [log]',
      'sinks: [nowhere]',
      'dedup: [order_id]',
      'on_problem: hold',
      'allow_files: false',
    ]) {
      const name = key.split(':')[0]!;
      expect(load(`    kind: in-call\n    ${key}\n`)).toThrow(
        `hooks.lookup.${name}: an in-call hook stores nothing, so it has no ${name}`,
      );
    }
    expect(load('    handler: ./x.mjs\n')).toThrow('hooks.lookup.handler: only an in-call hook has a handler');
    expect(load('    kind: end-of-call\n    handler_timeout: 1s\n')).toThrow(
      'hooks.lookup.handler_timeout: only an in-call hook has a handler_timeout',
    );
    expect(load('    kind: in-call\n    handler_timeout: 10s\n')).toThrow(
      /hooks\.lookup\.handler_timeout: handler_timeout must be from 1ms to 8s/,
    );
    expect(load('    kind: mid-call\n')).toThrow(/hooks\.lookup\.kind/);
    const reconcile =
      'reconcile:\n  api_url: https://calls.example.com/api/v1\n  api_key: k\n  hook: lookup\nhooks:\n  lookup:\n    kind: in-call\n';
    expect(() => loadConfig({}, file(reconcile))).toThrow(
      'reconcile.hook: "lookup" is an in-call hook, which stores nothing',
    );
  });

  it("reads the dashboard's timezone (an IANA name, the server's by default) and secure_cookies (docs/reference.md#time-zone)", () => {
    expect(loadConfig({})).toMatchObject({
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      secureCookies: false,
    });
    expect(loadConfig({}, file('timezone: Asia/Kolkata\nsecure_cookies: true\n'))).toMatchObject({
      timezone: 'Asia/Kolkata',
      secureCookies: true,
    });
    expect(() => loadConfig({}, file('timezone: Mars/Olympus\n'))).toThrow(
      /timezone: timezone must be an IANA time zone name/,
    );
  });
});
