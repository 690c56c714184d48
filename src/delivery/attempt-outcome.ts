import { classify } from '../sinks/errors.js';
import type { RetryPolicy } from '../sinks/policy.js';
import type { AttemptResult } from '../store/outbox.js';
import { retryDelay } from './backoff.js';

/** What the worker records of a failed attempt, and what it waits for after it. */
export interface FailedAttempt {
  attempt: Omit<AttemptResult, 'startedAt' | 'durationMs'>;
  /** When the delivery is due again; none when it is dead. */
  retryAt?: number;
  /**
   * A 429: every delivery of the sink waits until then (docs/reference.md#what-every-sink-shares), this one included.
   */
  pauseSinkUntil?: number;
}

/**
 * The classifier's outcome (sinks/errors.ts) as an attempt's record: dead at once, or retried after the policy's wait.
 * A "too many requests" pauses the whole sink until the wait the service gave, or without one its next back-off step
 * (docs/reference.md#what-every-sink-shares); the attempt that met it counts like any other, so after the last one it
 * is dead, though the sink still waits.
 */
export function attemptOutcome(err: unknown, attempt: number, policy: RetryPolicy, now = Date.now()): FailedAttempt {
  const outcome = classify(err);
  const recorded = { error: outcome.error, httpStatus: outcome.status };
  if (outcome.kind === 'permanent') return { attempt: { outcome: 'dead', ...recorded } };
  if (outcome.kind === 'rate-limited') {
    // The wait the service gave is when it will take requests again: no sooner, and no later for a schedule step.
    const step = retryDelay(Math.min(attempt, policy.schedule.length), policy) ?? 0;
    const pauseSinkUntil = now + (outcome.retryAfterMs ?? step);
    const more = policy.schedule[attempt - 1] !== undefined;
    return more
      ? { attempt: { outcome: 'retry', ...recorded }, retryAt: pauseSinkUntil, pauseSinkUntil }
      : { attempt: { outcome: 'dead', ...recorded }, pauseSinkUntil };
  }
  const delay = retryDelay(attempt, policy, outcome.retryAfterMs);
  if (delay === undefined) return { attempt: { outcome: 'dead', ...recorded } };
  return { attempt: { outcome: 'retry', ...recorded }, retryAt: now + delay };
}
