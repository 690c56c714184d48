import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers/server.js';
import { ConfigError, loadConfig } from './config.js';
import { maskSecrets } from './secrets.js';
import { RECOMMENDED_PARAMETERS } from './normalize/index.js';
import { resolveSinks } from './sinks/registry.js';

const file = (content: string, name = 'callhook.yaml') => {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
};

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8787, host: '0.0.0.0', logLevel: 'info', apiKeys: [], phoneRegion: 'IN', bodyLimit: 1024 * 1024 });
    expect(config.dataDir).toMatch(/\/data$/);
    expect([...config.hooks.keys()]).toEqual(['end-of-call']);
    const hook = config.hooks.get('end-of-call')!;
    expect(hook).toMatchObject({ dedup: ['call_id', 'order_id'], on_problem: 'deliver', sinks: ['log', 'jsonl'], allow_files: false });
    expect(hook.parameters).toEqual(RECOMMENDED_PARAMETERS);
    expect(config.sinks.map((s) => s.type)).toEqual(['log', 'jsonl']);
  });

  it('takes environment variables over the file', () => {
    const path = file('port: 9000\nhost: 127.0.0.1\nlog_level: debug\n');
    const config = loadConfig({ PORT: '9100', CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa, key-bbbbbbbbbbbbbbbb', LOG_LEVEL: 'warn' }, path);
    expect(config).toMatchObject({ port: 9100, host: '127.0.0.1', logLevel: 'warn', apiKeys: ['key-aaaaaaaaaaaaaaaa', 'key-bbbbbbbbbbbbbbbb'] });
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
    expect(config.secrets).toContain('hook-key-0123456789abcdef');
    const json = file(JSON.stringify({ hooks: { 'end-of-call': { dedup: ['order_id'] } } }), 'c.json');
    expect(loadConfig({}, json).hooks.get('end-of-call')!.parameters).toEqual(RECOMMENDED_PARAMETERS);
  });

  it('stops with a message that names the bad key', () => {
    const cases: [string, RegExp][] = [
      ['prot: 1\n', /prot: unknown key/],
      ['port: "eighty"\n', /port: /],
      ['hooks:\n  end-of-call:\n    on_problem: drop\n', /hooks\.end-of-call\.on_problem/],
      ['hooks:\n  end-of-call:\n    parameters:\n      - { identifier: Name, type: string }\n', /hooks\.end-of-call\.parameters\[0\]\.identifier/],
      ['hooks:\n  end-of-call:\n    parameters:\n      - { identifier: n, type: number, format: email }\n', /hooks\.end-of-call\.parameters\[0\]/],
      ['hooks:\n  end-of-call:\n    sinks: [nowhere]\n', /hooks\.end-of-call\.sinks: no sink is named "nowhere"/],
      ['api_keys: [short]\n', /api_keys\[0\]/],
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
    expect(loadConfig({ DIR: '/tmp/x' }, path).sinks[0]).toEqual({ name: 'out', type: 'jsonl', path: '/tmp/x/calls-${x}.jsonl' });
  });

  it('refuses an unknown sink type listing the known ones, and a bad sink option naming it', async () => {
    await expect(resolveSinks([{ name: 'crm', type: 'salesforce' }])).rejects.toThrow(/unknown sink type "salesforce" \(known types: log, jsonl/);
    await expect(resolveSinks([{ name: 'out', type: 'jsonl', paht: 'x' }])).rejects.toThrow(/sinks\[0\] \(out\)\.paht: unknown option/);
    await expect(resolveSinks([{ name: 'out', type: 'log', level: 'loud' }])).rejects.toThrow(/sinks\[0\] \(out\)\.level/);
  });

  it('collects secrets so they can be masked', () => {
    const path = file('sinks:\n  - { name: out, type: log }\n');
    const config = loadConfig({ CALLHOOK_API_KEYS: 'key-aaaaaaaaaaaaaaaa', CALLHOOK_ADMIN_TOKEN: 'admin-bbbbbbbbbbbbbbbb', DATABASE_URL: 'postgres://u:s3cr3t@db/x' }, path);
    expect(config.secrets).toEqual(expect.arrayContaining(['key-aaaaaaaaaaaaaaaa', 'admin-bbbbbbbbbbbbbbbb', 's3cr3t']));
    expect(maskSecrets('postgres://u:s3cr3t@db/x key-aaaaaaaaaaaaaaaa', config.secrets)).toBe('postgres://u:***@db/x ***');
  });
});
