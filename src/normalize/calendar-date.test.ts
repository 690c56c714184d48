import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readDate, toCalendarDate } from './calendar-date.js';

describe('toCalendarDate', () => {
  it.each([
    ['2026-11-21', '2026-11-21'],
    ['2024-02-29', '2024-02-29'],
    ['2000-02-29', '2000-02-29'],
    ['2026-12-31', '2026-12-31'],
    [' 2026-11-21 ', '2026-11-21'],
    ['2026-11-21T10:00:00Z', '2026-11-21'],
    ['2026-11-21T23:30:00-05:00', '2026-11-21'],
    ['2026-11-21T00:15:00+05:30', '2026-11-21'],
    ['2026-11-21 10:00', '2026-11-21'],
    ['2026-11-21T10:00:00.123Z', '2026-11-21'],
    ['2026-11-21T10:00', '2026-11-21'],
    ['2016-12-31T23:59:60Z', '2016-12-31'],
  ])('reads %j as %s', (input, expected) => {
    expect(toCalendarDate(input)).toBe(expected);
  });

  it.each([
    '2023-02-29',
    '1900-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-01-00',
    '2026-01-32',
    '21/11/2026',
    '11/21/2026',
    '2026-1-5',
    '20261121',
    'yesterday',
    '2026-11-21T25:00:00Z',
    '2026-11-21T10:60Z',
    '2026-11-21T10:00:61Z',
    '2026-11-21T10:00:00+24:00',
    '2026-11-21T',
    '2026-11-21 at noon',
    '',
  ])('refuses %j', (input) => {
    expect(toCalendarDate(input)).toBeUndefined();
  });
});

describe('readDate, day first (the default, as in India)', () => {
  it.each([
    ['2026-11-21', '2026-11-21'],
    ['2026-11-21T23:30:00-05:00', '2026-11-21'],
    ['21/11/2026', '2026-11-21'],
    ['21-11-2026', '2026-11-21'],
    ['21.11.2026', '2026-11-21'],
    [' 21/11/2026 ', '2026-11-21'],
    ['05/03/2026', '2026-03-05'],
    ['5/3/2026', '2026-03-05'],
    ['5.3.2026', '2026-03-05'],
    ['01/12/2026', '2026-12-01'],
    ['29/02/2024', '2024-02-29'],
    ['29/02/2000', '2000-02-29'],
    ['31/12/2026', '2026-12-31'],
    ['21 Nov 2026', '2026-11-21'],
    ['21 nov 2026', '2026-11-21'],
    ['21 NOV 2026', '2026-11-21'],
    ['21 November 2026', '2026-11-21'],
    ['21 NOVEMBER 2026', '2026-11-21'],
    ['1 Sep 2026', '2026-09-01'],
    ['1 Sept 2026', '2026-09-01'],
    ['01 September 2026', '2026-09-01'],
    ['5 May 2026', '2026-05-05'],
    ['29 Feb 2024', '2024-02-29'],
    ['21  Nov  2026', '2026-11-21'],
  ])('reads %j as %s', (input, expected) => {
    expect(readDate(input)).toBe(expected);
    expect(readDate(input, 'DMY')).toBe(expected);
  });

  it.each([
    // A two-digit year is a guess at the century.
    '21/11/26',
    '21-11-26',
    '21.11.26',
    '21 Nov 26',
    // Not on the calendar: refused, never rolled over.
    '31/02/2026',
    '29/02/2023',
    '29/02/1900',
    '31/04/2026',
    '00/11/2026',
    '21/00/2026',
    '21/13/2026',
    '32/01/2026',
    '30 Feb 2024',
    // Month first is read only when the config says MDY.
    '11/21/2026',
    // Forms docs/normalising.md does not list.
    '21/11-2026',
    '21/11/02026',
    '021/11/2026',
    '2026/11/21',
    '21/11/2026 10:00',
    'Nov 21 2026',
    'Nov 21, 2026',
    '21 Nov, 2026',
    '21-Nov-2026',
    '21st Nov 2026',
    '21 Nov. 2026',
    '21 Septem 2026',
    '21 Novem 2026',
    '21 Smarch 2026',
    '21112026',
    'yesterday',
    '',
  ])('refuses %j', (input) => {
    expect(readDate(input)).toBeUndefined();
  });
});

describe('readDate, month first (date_order: MDY)', () => {
  it.each([
    ['11/21/2026', '2026-11-21'],
    ['11-21-2026', '2026-11-21'],
    ['11.21.2026', '2026-11-21'],
    ['3/5/2026', '2026-03-05'],
    ['02/29/2024', '2024-02-29'],
    // The ISO and named forms say which is which whatever the order.
    ['2026-11-21', '2026-11-21'],
    ['21 Nov 2026', '2026-11-21'],
  ])('reads %j as %s', (input, expected) => {
    expect(readDate(input, 'MDY')).toBe(expected);
  });

  it('reads the same numeric text as another date than day first does', () => {
    expect(readDate('05/03/2026', 'DMY')).toBe('2026-03-05');
    expect(readDate('05/03/2026', 'MDY')).toBe('2026-05-03');
  });

  it.each(['21/11/2026', '02/29/2023', '11/21/26', '13/01/2026'])('refuses %j', (input) => {
    expect(readDate(input, 'MDY')).toBeUndefined();
  });
});

describe('readDate against the calendar of Date.UTC', () => {
  // Any day 1-31 of any month: Date.UTC rolls an impossible date over (31/02 to March), which is the oracle.
  const parts = fc.record({
    year: fc.integer({ min: 1000, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
  });
  const pad = (n: number) => String(n).padStart(2, '0');

  it('reads every real date in each form and order, and refuses every date the calendar does not have', () => {
    fc.assert(
      fc.property(parts, fc.constantFrom('/', '-', '.'), fc.boolean(), ({ year, month, day }, separator, padded) => {
        const utc = new Date(Date.UTC(year, month - 1, day));
        const real = utc.getUTCMonth() === month - 1;
        const expected = real ? `${year}-${pad(month)}-${pad(day)}` : undefined;
        const [d, m] = padded ? [pad(day), pad(month)] : [String(day), String(month)];
        expect(readDate(`${d}${separator}${m}${separator}${year}`, 'DMY')).toBe(expected);
        expect(readDate(`${m}${separator}${d}${separator}${year}`, 'MDY')).toBe(expected);
        const name = utc.toLocaleString('en-IN', { month: padded ? 'long' : 'short', timeZone: 'UTC' });
        if (real) expect(readDate(`${d} ${name} ${year}`)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
