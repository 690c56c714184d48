import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers/server.js';
import { loadConfig } from './config.js';
import {
  deletingDurationOption,
  deletingDurationSchema,
  durationOption,
  durationSchema,
  formatDuration,
  readDeletingDuration,
  readDuration,
} from './duration.js';
import { resolveSinks } from './sinks/registry.js';

const ms = (text: string) => {
  const read = readDuration(text);
  return 'ms' in read ? read.ms : read.error;
};

describe('the duration grammar (docs/reference.md#durations)', () => {
  it('reads a number and a unit, each unit', () => {
    expect(['250ms', '30s', '5m', '12h', '90d', '2w'].map(ms)).toEqual([
      250, 30_000, 300_000, 43_200_000, 7_776_000_000, 1_209_600_000,
    ]);
  });

  it('reads several parts in a row, in any order, with spaces between or not', () => {
    expect(ms('1h30m')).toBe(5_400_000);
    expect(ms('1h 30m')).toBe(5_400_000);
    expect(ms('30m1h')).toBe(5_400_000);
    expect(ms('1d12h30m15s500ms')).toBe(86_400_000 + 43_200_000 + 1_800_000 + 15_000 + 500);
    expect(ms(' 30 s ')).toBe(30_000);
  });

  it('reads `m` as minutes and `ms` as milliseconds, also next to each other', () => {
    expect(ms('5m')).toBe(300_000);
    expect(ms('5ms')).toBe(5);
    expect(ms('1m5ms')).toBe(60_005);
  });

  it('reads a bare number as milliseconds', () => {
    expect(ms('1500')).toBe(1500);
    expect(ms('0')).toBe(0);
  });

  it('reads a decimal fraction exactly, and refuses a fraction of a millisecond', () => {
    expect(ms('1.5h')).toBe(5_400_000);
    expect(ms('1.1s')).toBe(1100);
    expect(ms('0.25d')).toBe(21_600_000);
    expect(ms('0.5ms')).toBe('"0.5ms" is not a whole number of milliseconds');
    expect(ms('1.5')).toBe('"1.5" is not a whole number of milliseconds');
  });

  it('refuses what is not in the grammar, saying what the grammar is', () => {
    for (const text of [
      '',
      ' ',
      'soon',
      '90 days',
      '7 days',
      '1H',
      '1M',
      '-5m',
      '+5m',
      '1h30',
      '1m s',
      'h',
      '.5h',
      '1.h',
      '5y',
      '1e3',
      '1,000',
      '1h-30m',
    ]) {
      expect(ms(text), JSON.stringify(text)).toBe(
        `"${text}" is not a duration: a number and a unit ms, s, m, h, d or w, several in a row (1h30m), or a bare number of milliseconds`,
      );
    }
  });

  it('refuses a duration past what a number holds exactly', () => {
    expect(ms('99999999999999w')).toBe('"99999999999999w" is too long a duration');
  });

  it('names the CLI option in its one-line error', () => {
    expect(durationOption('1h30m', '--older-than')).toBe(5_400_000);
    expect(() => durationOption('ninety days', '--older-than')).toThrow(
      /^--older-than: "ninety days" is not a duration: a number and a unit/,
    );
  });

  it('in the config, takes a JSON number of milliseconds or the text', () => {
    expect(durationSchema.parse(1500)).toBe(1500);
    expect(durationSchema.parse('1h30m')).toBe(5_400_000);
    expect(durationSchema.safeParse(1.5).error?.issues[0]?.message).toBe('1.5 is not a whole number of milliseconds');
    expect(durationSchema.safeParse(-1).error?.issues[0]?.message).toBe('-1 is not a whole number of milliseconds');
  });

  it('is the grammar of the config file, whose error names the key', async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.yaml');
    writeFileSync(
      path,
      'auth_limit:\n  window: 1h30m\nsinks:\n  - { name: crm, type: http, url: "https://crm.example/in", timeout: 1m30s }\n',
    );
    const config = loadConfig({ CALLHOOK_DATA_DIR: dir }, path);
    expect(config.authLimit.windowMs).toBe(5_400_000);
    expect((await resolveSinks(config.sinks)).find((s) => s.name === 'crm')?.policy.timeoutMs).toBe(90_000);
    await expect(
      resolveSinks([{ name: 'crm', type: 'http', url: 'https://crm.example/in', timeout: 'soon' }]),
    ).rejects.toThrow(/sinks\[0\] \(crm\)\.timeout: "soon" is not a duration/);
    writeFileSync(path, 'auth_limit:\n  window: 1h30\n');
    expect(() => loadConfig({ CALLHOOK_DATA_DIR: dir }, path)).toThrow(/auth_limit\.window: "1h30" is not a duration/);
  });

  describe('where a duration decides what is deleted', () => {
    const deleting = (text: string) => {
      const read = readDeletingDuration(text);
      return 'ms' in read ? read.ms : read.error;
    };

    it('reads a number and a unit as everywhere', () => {
      expect(['90d', '12h', '2w', '1h30m', '1.5d', '500ms', ' 30 s '].map(deleting)).toEqual([
        7_776_000_000, 43_200_000, 1_209_600_000, 5_400_000, 129_600_000, 500, 30_000,
      ]);
    });

    it('refuses a bare number, showing the fix', () => {
      expect(deleting('90')).toBe('90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds');
      expect(deleting(' 0 ')).toBe('0 has no unit: write 0d for 0 days, or 0ms for 0 milliseconds');
      expect(deleting('1.5')).toBe('1.5 has no unit: write 1.5d for 1.5 days, or 1.5ms for 1.5 milliseconds');
    });

    it('refuses what is not in the grammar, without offering a bare number', () => {
      expect(deleting('90 days')).toBe(
        '"90 days" is not a duration: a number and a unit ms, s, m, h, d or w, several in a row (90d, 1h30m)',
      );
      expect(deleting('0.5ms')).toBe('"0.5ms" is not a whole number of milliseconds');
    });

    it('names the CLI option in its one line', () => {
      expect(deletingDurationOption('90d', '--older-than')).toBe(7_776_000_000);
      expect(() => deletingDurationOption('90', '--older-than')).toThrow(
        /^--older-than 90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds$/,
      );
      expect(() => deletingDurationOption('ninety', '--older-than')).toThrow(
        /^--older-than: "ninety" is not a duration/,
      );
    });

    it('in the config, refuses a JSON number as it refuses a bare number', () => {
      expect(deletingDurationSchema.parse('90d')).toBe(7_776_000_000);
      expect(deletingDurationSchema.safeParse(90).error?.issues[0]?.message).toBe(
        '90 has no unit: write 90d for 90 days, or 90ms for 90 milliseconds',
      );
      expect(deletingDurationSchema.safeParse('90').error?.issues[0]?.message).toMatch(/^90 has no unit/);
    });
  });

  it('is written back in the largest units that say it exactly, and read back as the same number', () => {
    const cases: [number, string][] = [
      [90 * 86_400_000, '90d'],
      [30 * 86_400_000, '30d'],
      [14 * 86_400_000, '2w'],
      [86_400_000 + 3_600_000, '1d1h'],
      [7 * 86_400_000, '1w'],
      [5 * 60_000, '5m'],
      [5_400_000, '1h30m'],
      [1_500, '1s500ms'],
      [1, '1ms'],
      [0, '0s'],
    ];
    for (const [value, text] of cases) {
      expect(formatDuration(value)).toBe(text);
      expect(ms(text)).toBe(value);
    }
  });
});
