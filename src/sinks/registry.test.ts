import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.js';
import { resolveSinks } from './registry.js';

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
});
