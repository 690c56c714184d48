import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { builtInTypes, resolveSinks } from './registry.js';

describe('resolveSinks', () => {
  it('refuses a `when` pattern that can backtrack catastrophically, naming the sink (contract section 6)', async () => {
    const sinks = [
      { name: 'audit', type: 'log' },
      { name: 'crm', type: 'log', when: { all: [{ field: 'valid', eq: true }, { field: 'call_summary', matches: '(a+)+$' }] } },
    ];
    const refused = await resolveSinks(sinks).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(/^sinks\[1\] \(crm\)\.when\.all\.1\.matches: "\(a\+\)\+\$" can backtrack catastrophically/);
  });

  it('takes a safe pattern', async () => {
    const [spec] = await resolveSinks([{ name: 'crm', type: 'log', when: { field: 'call_outcome', matches: '^order\\s+placed$' } }]);
    expect(spec!.when).toEqual({ field: 'call_outcome', matches: '^order\\s+placed$' });
  });

  it('finds the built-in types by their folders, the simplest first, and loads one only when it is named', async () => {
    expect(builtInTypes().slice(0, 5)).toEqual(['log', 'jsonl', 'http', 'slack', 'tag-contact']);
    expect(builtInTypes()).not.toContain('shared');
    await expect(resolveSinks([{ name: 'x', type: 'shared' }])).rejects.toThrow(/unknown sink type "shared" \(known types: log, jsonl, http, slack, tag-contact.*, module\)/);
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
    await expect(resolveSinks([{ name: 'm', type: 'module', module: './sink.mjs' }], folder)).rejects.toThrow('sinks[0] (m).path: path is required');
    const [spec] = await resolveSinks([{ name: 'm', type: 'module', module: './sink.mjs', path: ' out.csv ' }], folder);
    const sink = (await spec!.open({ name: 'm', dataDir: folder, log: undefined as never })) as unknown as { options: unknown };
    expect(sink.options).toEqual({ path: 'out.csv' });
    writeFileSync(join(folder, 'bad.mjs'), 'export const options = { path: "string" };\nexport default () => ({ async deliver() {} });');
    await expect(resolveSinks([{ name: 'b', type: 'module', module: './bad.mjs' }], folder)).rejects.toThrow('sinks[0] (b).module: its export `options` is not a schema');
  });
});
