import { describe, expect, it } from 'vitest';
import { createAuthLimiter } from './auth-limit.js';

describe('auth limiter', () => {
  it('limits an address after max failures until its window ends', () => {
    let t = 1_000;
    const limiter = createAuthLimiter({ max: 3, windowMs: 10_000, now: () => t });
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfterMs('a')).toBe(0);
      limiter.fail('a');
    }
    expect(limiter.retryAfterMs('a')).toBe(10_000);
    expect(limiter.retryAfterMs('b')).toBe(0);
    t += 4_000;
    expect(limiter.retryAfterMs('a')).toBe(6_000);
    t += 6_000;
    expect(limiter.retryAfterMs('a')).toBe(0);
    limiter.fail('a');
    expect(limiter.retryAfterMs('a')).toBe(0);
  });

  it('forgets the oldest address beyond its capacity', () => {
    const limiter = createAuthLimiter({ max: 1, capacity: 2 });
    limiter.fail('a');
    limiter.fail('b');
    limiter.fail('c');
    expect(limiter.retryAfterMs('a')).toBe(0);
    expect(limiter.retryAfterMs('b')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('c')).toBeGreaterThan(0);
  });
});
