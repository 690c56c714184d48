import { describe, expect, it } from 'vitest';
import { arrivalMargin, rateWindow } from './rate-window.js';

describe('rate window', () => {
  it('lets at most max start in any window of its length, sliding, not in fixed intervals', () => {
    const rate = rateWindow({ max: 3, perMs: 1000 }, 0);
    expect(rate.available(0)).toBe(3);
    rate.started(1, 0);
    rate.started(2, 900);
    expect(rate.available(950)).toBe(0);
    expect(rate.nextIn(950)).toBe(50);
    // At 1000 the first start leaves the window; the two of 900 stay in it until 1900.
    expect(rate.available(1000)).toBe(1);
    expect(rate.nextIn(1000)).toBe(0);
    rate.started(1, 1000);
    expect(rate.available(1899)).toBe(0);
    expect(rate.nextIn(1899)).toBe(1);
    expect(rate.available(1900)).toBe(2);
    expect(rate.available(2000)).toBe(3);
  });

  it('keeps the newest max starts when more started than it allowed', () => {
    const rate = rateWindow({ max: 2, perMs: 100 }, 0);
    rate.started(5, 0);
    expect(rate.available(50)).toBe(0);
    expect(rate.nextIn(50)).toBe(50);
    expect(rate.available(100)).toBe(2);
  });

  it('keeps the window a little longer than asked, so the service, counting arrivals, sees no more than max in its own', () => {
    expect([100, 1000, 10_000, 3_600_000].map(arrivalMargin)).toEqual([50, 50, 200, 1000]);
    const rate = rateWindow({ max: 1, perMs: 1000 });
    rate.started(1, 0);
    expect(rate.nextIn(1000)).toBe(50);
    expect(rate.available(1050)).toBe(1);
  });
});
