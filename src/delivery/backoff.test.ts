import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, DEFAULT_SCHEDULE_MS } from '../sinks/policy.js';
import { retryDelay } from './backoff.js';

describe('retryDelay', () => {
  it('gives 8 attempts over about 12 hours by default', () => {
    expect(DEFAULT_SCHEDULE_MS.length + 1).toBe(8);
    const total = DEFAULT_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(11 * 3600_000);
    expect(total).toBeLessThan(13 * 3600_000);
  });

  it('follows the schedule within the jitter', () => {
    expect(retryDelay(1, DEFAULT_RETRY_POLICY, undefined, () => 0.5)).toBe(30_000);
    expect(retryDelay(1, DEFAULT_RETRY_POLICY, undefined, () => 0)).toBe(24_000);
    expect(retryDelay(1, DEFAULT_RETRY_POLICY, undefined, () => 1)).toBe(36_000);
    expect(retryDelay(2, DEFAULT_RETRY_POLICY, undefined, () => 0.5)).toBe(120_000);
  });

  it('stops after the last attempt', () => {
    expect(retryDelay(7, DEFAULT_RETRY_POLICY)).toBeDefined();
    expect(retryDelay(8, DEFAULT_RETRY_POLICY)).toBeUndefined();
  });

  it('never comes back sooner than Retry-After asked', () => {
    expect(retryDelay(1, DEFAULT_RETRY_POLICY, 600_000, () => 0.5)).toBe(600_000);
    expect(retryDelay(1, DEFAULT_RETRY_POLICY, 1_000, () => 0.5)).toBe(30_000);
  });
});
