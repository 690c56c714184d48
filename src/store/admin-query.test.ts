import { describe, expect, it } from 'vitest';
import { pageLimit, retryState, timeBound, uniqueSinks } from './admin-query.js';

describe('timeBound', () => {
  it('reads a date as its midnight UTC and a timestamp as the instant it names', () => {
    expect(timeBound('2087-03-01', 'from')).toBe('2087-03-01T00:00:00.000Z');
    expect(timeBound('2087-03-01T10:30Z', 'from')).toBe('2087-03-01T10:30:00.000Z');
    expect(timeBound('2087-03-01T10:30:15.5+02:00', 'to')).toBe('2087-03-01T08:30:15.500Z');
    expect(timeBound('2087-03-01T00:00:00.123456-05:30', 'to')).toBe('2087-03-01T05:30:00.123Z');
  });

  it('reads a timestamp without an offset as UTC, whatever the local zone', () => {
    expect(timeBound('2087-03-01T10:30:00', 'from')).toBe('2087-03-01T10:30:00.000Z');
  });

  it('refuses what is not a real date or an ISO timestamp, naming the bound', () => {
    expect(timeBound(undefined, 'from')).toBeUndefined();
    for (const bad of [
      '',
      'yesterday',
      '2087-02-30',
      '2087-13-01',
      '2087-3-1',
      '2087-03-01 10:00',
      '1700000000000',
      '2087-03-01T10:00:00+0200',
    ]) {
      expect(() => timeBound(bad, 'to'), bad).toThrow(/"to" must be a date/);
    }
  });
});

describe('admin query checks', () => {
  it('takes a positive whole page size, 100 by default', () => {
    expect(pageLimit(undefined)).toBe(100);
    expect(pageLimit(1)).toBe(1);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => pageLimit(bad)).toThrow(/"limit"/);
  });

  it('retries dead deliveries by default, pending ones on request, never others', () => {
    expect(retryState(undefined)).toBe('dead');
    expect(retryState('pending')).toBe('pending');
    expect(() => retryState('in_flight' as never)).toThrow(/dead or pending/);
  });

  it('names each sink once', () => {
    expect(uniqueSinks(['a', 'b', 'a'])).toEqual(['a', 'b']);
  });
});
