import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { builtInType, builtInTypes, openSinks, resolveSinks } from './registry.js';

describe('resolveSinks', () => {
  it('refuses a `when` pattern that can backtrack catastrophically, naming the sink (docs/reference.md#refused-requests)', async () => {
    const sinks = [
      { name: 'audit', type: 'log' },
      {
        name: 'crm',
        type: 'log',
        when: {
          all: [
            { field: 'valid', eq: true },
            { field: 'call_summary', matches: '(a+)+$' },
          ],
        },
      },
    ];
    const refused = await resolveSinks(sinks).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(
      /^sinks\[1\] \(crm\)\.when\.all\.1\.matches: "\(a\+\)\+\$" can backtrack catastrophically/,
    );
  });

  it('refuses a `when` pattern the linear-time engine cannot run (a backreference), naming the sink (issue 20)', async () => {
    const refused = await resolveSinks([
      { name: 'crm', type: 'log', when: { field: 'call_summary', matches: '(a)\\1' } },
    ]).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(
      /^sinks\[0\] \(crm\)\.when\.matches: "\(a\)\\\\1" cannot be run in linear time \(backreferences and lookarounds are not supported: invalid escape sequence/,
    );
  });

  it('takes a safe pattern', async () => {
    const [spec] = await resolveSinks([
      { name: 'crm', type: 'log', when: { field: 'call_outcome', matches: '^order\\s+placed$' } },
    ]);
    expect(spec!.when).toEqual({ field: 'call_outcome', matches: '^order\\s+placed$' });
  });

  it('gives test traffic to log and jsonl unless told `test_traffic: false`, to any other type only with `test_traffic: true` (docs/reference.md#test-traffic)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callhook-test-traffic-'));
    // A module whose options are strict: `test_traffic` is every entry's key, never handed to the type.
    writeFileSync(
      join(folder, 'sink.mjs'),
      [
        "export const options = { '~standard': { version: 1, vendor: 'hand-made', validate: (v) => Object.keys(v).every((k) => k === 'path') ? { value: v } : { issues: [{ message: `unknown option ${Object.keys(v)}` }] } } };",
        'export default () => ({ async deliver() {} });',
      ].join('\n'),
    );
    const specs = await resolveSinks(
      [
        { name: 'log', type: 'log' },
        { name: 'file', type: 'jsonl', path: join(folder, 'calls.jsonl') },
        { name: 'quiet-file', type: 'jsonl', path: join(folder, 'real.jsonl'), test_traffic: false },
        { name: 'crm', type: 'http', url: 'https://crm.example/calls' },
        { name: 'staging', type: 'http', url: 'https://staging.example/calls', test_traffic: true },
        { name: 'mine', type: 'module', module: './sink.mjs', path: 'x' },
        { name: 'mine-too', type: 'module', module: './sink.mjs', path: 'x', test_traffic: true },
      ],
      folder,
    );
    expect(specs.map((spec) => [spec.name, spec.testTraffic])).toEqual([
      ['log', true],
      ['file', true],
      ['quiet-file', false],
      ['crm', false],
      ['staging', true],
      ['mine', false],
      ['mine-too', true],
    ]);
    await expect(resolveSinks([{ name: 'crm', type: 'log', test_traffic: 'yes' }])).rejects.toThrow(
      /^sinks\[0\] \(crm\)\.test_traffic: test_traffic is true or false$/,
    );
  });

  // That a type and its client library are loaded only when a config names it is seen from a fresh process:
  // test/sink-loading.test.ts.
  it('lists the built-in types, the simplest first, and refuses a name that is none', async () => {
    expect(builtInTypes().slice(0, 5)).toEqual(['log', 'jsonl', 'http', 'slack', 'tag-contact']);
    expect(builtInTypes().slice(5)).toEqual([...builtInTypes().slice(5)].sort());
    expect(builtInTypes()).not.toContain('shared');
    await expect(resolveSinks([{ name: 'x', type: 'shared' }])).rejects.toThrow(
      /unknown sink type "shared" \(known types: log, jsonl, http, slack, tag-contact.*, module\)/,
    );
    await expect(resolveSinks([{ name: 'x', type: 'toString' }])).rejects.toThrow(/unknown sink type "toString"/);
  });

  it('has a line for every folder that holds a type, and each type carries the name it is configured by', async () => {
    const folders = readdirSync(import.meta.dirname, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(import.meta.dirname, entry.name, `${entry.name}.ts`)))
      .map((entry) => entry.name);
    expect([...builtInTypes()].sort()).toEqual(folders.sort());
    for (const type of builtInTypes()) expect((await builtInType(type))?.type).toBe(type);
  });

  it("checks a module's options with any Standard Schema, not only callhook's own zod (docs/custom-sinks.md)", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'callhook-module-'));
    // What valibot, arktype or another copy of zod export: a `~standard` property with `validate`.
    writeFileSync(
      join(folder, 'sink.mjs'),
      [
        "export const options = { '~standard': { version: 1, vendor: 'hand-made', validate: (v) => typeof v.path === 'string' ? { value: { path: v.path.trim() } } : { issues: [{ message: 'path is required', path: [{ key: 'path' }] }] } } };",
        'export default (options) => ({ options, async deliver() {} });',
      ].join('\n'),
    );
    await expect(resolveSinks([{ name: 'm', type: 'module', module: './sink.mjs' }], folder)).rejects.toThrow(
      'sinks[0] (m).path: path is required',
    );
    const [spec] = await resolveSinks([{ name: 'm', type: 'module', module: './sink.mjs', path: ' out.csv ' }], folder);
    const sink = (await spec!.open({ name: 'm', dataDir: folder, log: undefined as never })) as unknown as {
      options: unknown;
    };
    expect(sink.options).toEqual({ path: 'out.csv' });
    writeFileSync(
      join(folder, 'bad.mjs'),
      'export const options = { path: "string" };\nexport default () => ({ async deliver() {} });',
    );
    await expect(resolveSinks([{ name: 'b', type: 'module', module: './bad.mjs' }], folder)).rejects.toThrow(
      'sinks[0] (b).module: its export `options` is not a schema',
    );
  });
});

describe('openSinks', () => {
  const log = pino({ level: 'silent' });
  const folder = mkdtempSync(join(tmpdir(), 'callhook-open-'));
  const module = (file: string, text: string) => (writeFileSync(join(folder, file), text), `./${file}`);

  it("passes `rate` and `paused` to the delivery policy, and a type's default rate where the entry gives none (docs/reference.md#what-every-sink-shares)", async () => {
    const [given, plain] = await resolveSinks([
      { name: 'a', type: 'log', rate: { max: 3, per: '1s' }, paused: true },
      { name: 'b', type: 'log' },
    ]);
    expect(given!.policy).toMatchObject({ rate: { max: 3, perMs: 1000 }, paused: true });
    expect(plain!.policy.paused).toBe(false);
    expect(plain!.policy.rate).toBeUndefined();
    await expect(resolveSinks([{ name: 'c', type: 'log', rate: { max: 0, per: '1s' } }])).rejects.toThrow(
      /^sinks\[0\] \(c\)\.rate\.max: /,
    );
    await expect(resolveSinks([{ name: 'c', type: 'log', paused: 'yes' }])).rejects.toThrow(
      /^sinks\[0\] \(c\)\.paused: /,
    );
  });

  it('does not stop start-up for a sink that cannot be opened: its attempts fail with that error until it opens (docs/reference.md#queues-and-databases)', async () => {
    const path = module(
      'flaky.mjs',
      [
        'let opens = 0;',
        'export default () => { if (++opens < 3) throw new Error(`connect ECONNREFUSED 127.0.0.1:5432 (open ${opens})`); return { async deliver(r) { globalThis.delivered = r.id; } }; };',
      ].join('\n'),
    );
    const specs = await resolveSinks(
      [
        { name: 'ok', type: 'log' },
        { name: 'db', type: 'module', module: path },
      ],
      folder,
    );
    const failed: [string, string][] = [];
    const sinks = await openSinks(
      specs,
      { dataDir: folder, log },
      { onOpenFailed: (name, err) => void failed.push([name, (err as Error).message]) },
    );
    expect(failed).toEqual([['db', 'connect ECONNREFUSED 127.0.0.1:5432 (open 1)']]);
    const context = { attempt: 1, idempotencyKey: 'k', signal: new AbortController().signal, log };
    const record = { id: 'r1' } as never;
    await expect(sinks.get('db')!.deliver(record, context)).rejects.toThrow(
      'connect ECONNREFUSED 127.0.0.1:5432 (open 2)',
    );
    await sinks.get('db')!.deliver(record, context);
    expect((globalThis as { delivered?: string }).delivered).toBe('r1');
    await Promise.all([...sinks.values()].map((s) => s.close?.()));
  });

  it('stops start-up for a module whose factory returns no sink: a mistake in the config, not an outage', async () => {
    const path = module('nothing.mjs', 'export default () => ({});');
    const specs = await resolveSinks([{ name: 'm', type: 'module', module: path }], folder);
    await expect(openSinks(specs, { dataDir: folder, log })).rejects.toThrow(/returned no object with deliver/);
  });
});
