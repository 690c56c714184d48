import { describe, expect, it } from 'vitest';
import { age, createClock, nextDay } from './time.js';

describe('dashboard times', () => {
  it('shows times in the configured zone', () => {
    expect(createClock('Asia/Kolkata').show('2026-11-26T12:00:00.000Z')).toBe('26 Nov 2026, 17:30:00');
    expect(createClock('UTC').show(Date.parse('2026-11-26T12:00:00Z'))).toBe('26 Nov 2026, 12:00:00');
    expect(createClock('UTC').show(null)).toBe('');
  });

  it("takes a filter's day as that day in the zone, summer time included", () => {
    expect(createClock('Asia/Kolkata').dayStart('2026-11-26')).toBe('2026-11-25T18:30:00.000Z');
    expect(createClock('America/New_York').dayStart('2026-07-01')).toBe('2026-07-01T04:00:00.000Z');
    expect(createClock('America/New_York').dayStart('2026-01-01')).toBe('2026-01-01T05:00:00.000Z');
    // The day summer time begins in Europe starts before the change.
    expect(createClock('Europe/Berlin').dayStart('2026-03-29')).toBe('2026-03-28T23:00:00.000Z');
    for (const bad of ['2026-02-30', '26-11-2026', 'today']) expect(createClock('UTC').dayStart(bad)).toBeUndefined();
    expect(nextDay('2026-12-31')).toBe('2027-01-01');
  });

  it('says an age as a person does', () => {
    expect([age(4.2), age(125), age(3 * 3600 + 300), age(2 * 86_400 + 4 * 3600)]).toEqual([
      '4 s',
      '2 min',
      '3 h 5 min',
      '2 d 4 h',
    ]);
  });
});
