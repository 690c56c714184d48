import { describe, expect, it } from 'vitest';
import { isActive, readActiveHours } from './active-hours.js';

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
