import { describe, expect, it } from 'vitest';
import { dayRange, zonedIso } from './zoned-time.js';

describe('times on the command line (docs/reference.md#time-zone)', () => {
  it('writes an instant in the zone with its offset, milliseconds only when there are some', () => {
    expect(zonedIso('Asia/Kolkata')('2026-11-27T08:15:00.000Z')).toBe('2026-11-27T13:45:00+05:30');
    expect(zonedIso('Asia/Kolkata')('2026-11-27T08:15:00.042Z')).toBe('2026-11-27T13:45:00.042+05:30');
    expect(zonedIso('America/Sao_Paulo')('2026-11-27T02:00:00.000Z')).toBe('2026-11-26T23:00:00-03:00');
    expect(zonedIso('UTC')('2026-11-27T23:59:59.999Z')).toBe('2026-11-27T23:59:59.999+00:00');
    // Summer time: the offset of that instant, not of today.
    expect(zonedIso('Europe/London')('2026-07-01T12:00:00.000Z')).toBe('2026-07-01T13:00:00+01:00');
    expect(zonedIso('Europe/London')('2026-12-01T12:00:00.000Z')).toBe('2026-12-01T12:00:00+00:00');
    expect(zonedIso('UTC')('not a time')).toBe('not a time');
  });

  it('reads --from and --to as whole days in the zone, both included', () => {
    expect(dayRange('Asia/Kolkata', { from: '2026-11-27', to: '2026-11-27' })).toEqual({
      from: '2026-11-26T18:30:00.000Z',
      to: '2026-11-27T18:30:00.000Z',
    });
    expect(dayRange('UTC', { to: '2026-12-31' })).toEqual({ from: undefined, to: '2027-01-01T00:00:00.000Z' });
    expect(dayRange('UTC', {})).toEqual({ from: undefined, to: undefined });
  });

  it('refuses what is not a day, naming the option', () => {
    expect(() => dayRange('UTC', { from: '27/11/2026' })).toThrow('--from takes a day, YYYY-MM-DD, not "27/11/2026"');
    expect(() => dayRange('UTC', { to: '2026-02-30' })).toThrow('--to takes a day, YYYY-MM-DD, not "2026-02-30"');
    expect(() => dayRange('UTC', { from: '2026-11-27T10:00:00Z' })).toThrow(/^--from takes a day/);
  });
});
