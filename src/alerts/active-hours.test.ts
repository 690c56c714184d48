import { describe, expect, it } from 'vitest';
import { activeWindowStart, isActive, readActiveHours } from './active-hours.js';

describe('active_hours', () => {
  it('reads HH:MM-HH:MM strictly', () => {
    expect(readActiveHours('09:00-21:00')).toEqual({ text: '09:00-21:00', from: 540, to: 1260 });
    expect(readActiveHours('00:00-24:00')).toEqual({ text: '00:00-24:00', from: 0, to: 1440 });
    for (const bad of [
      '9:00-21:00',
      '09:00-21:60',
      '24:00-06:00',
      '09:00-24:30',
      '09:00-09:00',
      '09:00 - 21:00',
      '09-21',
    ])
      expect(readActiveHours(bad), bad).toBeUndefined();
  });

  it('runs past midnight when its end comes before its start', () => {
    const night = readActiveHours('21:00-06:00')!;
    expect([20 * 60, 21 * 60, 0, 5 * 60 + 59, 6 * 60].map((m) => isActive(night, m))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
    const allDay = readActiveHours('00:00-24:00')!;
    expect([0, 720, 1439].every((m) => isActive(allDay, m))).toBe(true);
  });
});

describe('activeWindowStart', () => {
  const hours = readActiveHours('09:00-21:00')!;
  const at = (iso: string) => Date.parse(iso);

  it('is quiet_for back when the hours hold all of it', () => {
    expect(activeWindowStart(hours, 'UTC', at('2026-03-02T12:00:00Z'), 2 * 3_600_000)).toBe(at('2026-03-02T10:00:00Z'));
  });

  it('skips the night: two active hours back from 10:00 reach 20:00 the day before', () => {
    expect(activeWindowStart(hours, 'UTC', at('2026-03-02T10:00:00Z'), 2 * 3_600_000)).toBe(at('2026-03-01T20:00:00Z'));
  });

  it('counts from the end of the hours when now is outside them', () => {
    expect(activeWindowStart(hours, 'UTC', at('2026-03-02T23:30:00Z'), 3_600_000)).toBe(at('2026-03-02T20:00:00Z'));
  });

  it('reads the hours in the time zone: 09:00-21:00 in Kolkata is 03:30-15:30 UTC', () => {
    expect(activeWindowStart(hours, 'Asia/Kolkata', at('2026-03-02T04:30:00Z'), 2 * 3_600_000)).toBe(
      at('2026-03-01T14:30:00Z'),
    );
  });

  it('takes hours past midnight and all day', () => {
    const night = readActiveHours('21:00-06:00')!;
    expect(activeWindowStart(night, 'UTC', at('2026-03-02T01:00:00Z'), 5 * 3_600_000)).toBe(at('2026-03-01T05:00:00Z'));
    const allDay = readActiveHours('00:00-24:00')!;
    expect(activeWindowStart(allDay, 'UTC', at('2026-03-02T01:00:00Z'), 30 * 3_600_000)).toBe(
      at('2026-02-28T19:00:00Z'),
    );
  });
});
