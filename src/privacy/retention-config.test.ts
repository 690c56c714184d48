import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/server.js';
import { loadConfig } from '../config.js';
import { describeRetention, keptParts, retains } from './retention-config.js';

const configFile = (yaml: string) => {
  const path = join(tempDir(), 'callhook.yaml');
  writeFileSync(path, yaml);
  return path;
};
const load = (yaml: string) => loadConfig({}, configFile(yaml));
const refusal = (yaml: string) => {
  try {
    load(yaml);
  } catch (err) {
    return (err as Error).message.replace(/^config file \S+: /, '');
  }
  return 'accepted';
};

describe('the retention config (docs/reference.md#retention)', () => {
  it('is off by default, every 5 minutes, and says calls are kept forever', () => {
    const { retention } = loadConfig({});
    expect(retention).toEqual({ fields: {}, every: 300_000 });
    expect(keptParts(retention)).toEqual(['calls kept forever']);
    expect(retains(retention)).toBe(false);
  });

  it('has serve run its passes for the audit log alone', () => {
    const { retention } = load('retention: { audit: 90d }');
    expect(retains(retention)).toBe(true);
    expect(keptParts(retention)).toEqual(['calls kept forever', 'audit log 90d']);
  });

  it('reads every duration with its unit, and says what is kept how long', () => {
    const { retention } = load(
      `
retention:
  calls: 90d
  raw: 30d
  receipts: 2w
  audit: 365d
  fields: { recording_url: 7d, call_summary: 36h }
  every: 1m
`.replace('1y1d', '365d'),
    );
    expect(retention).toEqual({
      calls: 90 * 86_400_000,
      raw: 30 * 86_400_000,
      receipts: 14 * 86_400_000,
      audit: 365 * 86_400_000,
      fields: { recording_url: 7 * 86_400_000, call_summary: 36 * 3_600_000 },
      every: 60_000,
    });
    expect(describeRetention(retention)).toEqual({
      kept: 'calls kept 90d; raw requests 30d; receipts 2w; field recording_url 1w; field call_summary 1d12h; audit log 365d',
      calls: '90d',
      raw: '30d',
      receipts: '2w',
      audit: '365d',
      fields: { recording_url: '1w', call_summary: '1d12h' },
      every: '1m',
    });
  });

  it('stops start-up naming the key: a bare number, a duration that cannot be read, zero, an unknown key', () => {
    expect(refusal('retention: { calls: 90 }')).toBe(
      'retention.calls: 90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds',
    );
    expect(refusal('retention: { raw: "30" }')).toMatch(/^retention\.raw: 30 has no unit/);
    expect(refusal('retention: { fields: { recording_url: 7 } }')).toMatch(
      /^retention\.fields\.recording_url: 7 has no unit/,
    );
    expect(refusal('retention: { receipts: 3 days }')).toMatch(/^retention\.receipts: "3 days" is not a duration/);
    expect(refusal('retention: { audit: 0d }')).toBe('retention.audit: audit must be longer than 0');
    expect(refusal('retention: { every: 10ms }')).toBe('retention.every: every must be at least 100ms');
    expect(refusal('retention: { call: 90d }')).toBe('retention.call: unknown key');
  });

  it('warns of a field a hook is deduplicated on or reconcile matches by, and of a part kept as long as the call', () => {
    const { warnings } = load(`
reconcile: { api_url: "https://api.example/api/v1", api_key: k, lookback: 7d }
retention:
  calls: 30d
  raw: 30d
  fields: { recording_url: 1d, call_summary: 2d }
`);
    expect(warnings).toEqual([
      'retention.fields.recording_url: hook end-of-call is deduplicated on recording_url: once it is removed, a repeat of the call is no longer recognised as one',
      'retention.fields.recording_url: 1d is shorter than reconcile.lookback (1w): reconcile finds a stored call by its recording_url, and stores a call again once it is removed',
      'retention.raw: 30d is not shorter than retention.calls (30d): the calls go first, and it with them',
    ]);
  });
});
