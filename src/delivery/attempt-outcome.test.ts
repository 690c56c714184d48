import { describe, expect, it } from 'vitest';
import { RetryableError } from '../sinks/errors.js';
import { attemptOutcome } from './attempt-outcome.js';

const policy = { schedule: [30_000, 120_000], jitter: 0 };

describe('attempt outcome', () => {
  it('retries on the schedule, with Retry-After as a floor', () => {
    expect(attemptOutcome(new RetryableError('HTTP 503', { status: 503 }), 1, policy, 0)).toEqual({
      attempt: { outcome: 'retry', error: 'HTTP 503', httpStatus: 503 },
      retryAt: 30_000,
    });
    expect(
      attemptOutcome(new RetryableError('HTTP 503', { status: 503, retryAfterMs: 60_000 }), 1, policy, 0).retryAt,
    ).toBe(60_000);
    expect(attemptOutcome(new RetryableError('HTTP 503', { status: 503 }), 3, policy, 0)).toEqual({
      attempt: { outcome: 'dead', error: 'HTTP 503', httpStatus: 503 },
    });
  });

  it('pauses the sink for a 429 until the wait it was given, or its next back-off step (docs/reference.md#what-every-sink-shares)', () => {
    const given = attemptOutcome(new RetryableError('HTTP 429', { status: 429, retryAfterMs: 2000 }), 1, policy, 0);
    expect(given).toEqual({
      attempt: { outcome: 'retry', error: 'HTTP 429', httpStatus: 429 },
      retryAt: 2000,
      pauseSinkUntil: 2000,
    });
    const stepped = attemptOutcome(Object.assign(new Error('quota'), { rateLimited: true }), 2, policy, 0);
    expect(stepped).toEqual({
      attempt: { outcome: 'retry', error: 'quota', httpStatus: undefined },
      retryAt: 120_000,
      pauseSinkUntil: 120_000,
    });
  });

  it('counts the attempt that met a 429: after the last one it is dead, and the sink still waits', () => {
    const last = attemptOutcome(new RetryableError('HTTP 429', { status: 429, retryAfterMs: 5000 }), 3, policy, 0);
    expect(last).toEqual({ attempt: { outcome: 'dead', error: 'HTTP 429', httpStatus: 429 }, pauseSinkUntil: 5000 });
    expect(attemptOutcome(new RetryableError('HTTP 429', { status: 429 }), 3, policy, 0).pauseSinkUntil).toBe(120_000);
  });
});
