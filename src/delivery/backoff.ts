import type { RetryPolicy } from '../sinks/policy.js';

/**
 * The wait after a failed attempt, drawn from the sink's retry schedule (its policy, sinks/policy.ts, where the
 * default schedule is) and spread by its jitter.
 */

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
