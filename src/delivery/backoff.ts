/**
 * The declared retry schedule (contract section 5): the wait before attempt n+1 is `schedule[n-1]`, spread by
 * jitter so that a sink coming back is not hit by every delivery at the same instant.
 * The default is 8 attempts over about 12 hours.
 */
export const DEFAULT_SCHEDULE_MS: readonly number[] = [
  30_000, // 30 s
  2 * 60_000,
  10 * 60_000,
  30 * 60_000,
  60 * 60_000,
  3 * 60 * 60_000,
  7 * 60 * 60_000,
];

export interface RetryPolicy {
  /** Waits between attempts; attempts in all = schedule.length + 1. */
  schedule: readonly number[];
  /** Fraction of each wait that is randomised, both ways: 0.2 gives 80 % to 120 %. */
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { schedule: DEFAULT_SCHEDULE_MS, jitter: 0.2 };

/** Milliseconds to wait after failed attempt `attempt` (1-based), or undefined when it was the last. */
export function retryDelay(
  attempt: number,
  policy: RetryPolicy,
  retryAfterMs?: number,
  random = Math.random,
): number | undefined {
  const base = policy.schedule[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 + policy.jitter * (2 * random() - 1)));
  // A receiver's Retry-After (RFC 9110 section 10.2.3) is a floor: never come back sooner than it asked.
  return retryAfterMs !== undefined ? Math.max(jittered, retryAfterMs) : jittered;
}
