import { z } from 'zod';
import { durationSchema } from '../duration.js';

/**
 * What every sink config may say about how it is delivered to, whatever its type: `retry`, `timeout`,
 * `concurrency`, `rate` and `paused` (docs/reference.md#sinks-and-delivery, #queues-and-databases). `when`, the
 * other key every entry may carry, is the routing's (routing/filter.ts).
 *
 * Read by the registry with the rest of a sink's entry and by the delivery worker, which keeps to it: it sits here,
 * below both, so that reading a config entry never imports the worker (docs/design.md). How a wait is drawn from
 * the schedule is the worker's (delivery/backoff.ts).
 */

/**
 * The declared retry schedule (docs/reference.md#sinks-and-delivery): the wait before attempt n+1 is `schedule[n-1]`,
 * spread by jitter so that a sink coming back is not hit by every delivery at the same instant. The default is 8
 * attempts over about 12 hours.
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

export const retrySchema = z.strictObject({
  /** Attempts in all, the first included. */
  attempts: z.number().int().min(1).max(100).optional(),
  /** Waits between attempts; with `attempts` too, the last wait repeats or the list is cut to fit. */
  schedule: z.array(durationSchema).min(1).optional(),
  jitter: z.number().min(0).max(1).default(0.2),
});

/** docs/reference.md#queues-and-databases: at most `max` deliveries start in any window of `per`, in one process. */
export const rateSchema = z.strictObject({
  max: z.number().int().min(1),
  per: durationSchema.refine((ms) => ms > 0, 'per must be longer than 0'),
});

export const deliveryOptionsSchema = z.strictObject({
  retry: retrySchema.optional(),
  /** How long one attempt may take before it counts as failed and is retried. */
  timeout: durationSchema.default(30_000),
  /** Deliveries of this sink attempted at once. */
  concurrency: z.number().int().min(1).max(256).default(8),
  rate: rateSchema.optional(),
  /**
   * docs/reference.md#queues-and-databases: the sink starts paused, unless an operator has paused or resumed it since
   * (the store wins).
   */
  paused: z.boolean().default(false),
});

export interface DeliveryPolicy {
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: number;
  /** Starts allowed in any window of `perMs`; none when unlimited. */
  rate?: RatePolicy;
  /** The config's `paused`: what holds the sink while no operator has paused or resumed it. */
  paused: boolean;
}

export interface RatePolicy {
  max: number;
  perMs: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = {
  retry: DEFAULT_RETRY_POLICY,
  timeoutMs: 30_000,
  concurrency: 8,
  paused: false,
};

export function toPolicy(options: z.output<typeof deliveryOptionsSchema>): DeliveryPolicy {
  const rate = options.rate && { max: options.rate.max, perMs: options.rate.per };
  return {
    retry: toRetryPolicy(options.retry),
    timeoutMs: options.timeout,
    concurrency: options.concurrency,
    ...(rate && { rate }),
    paused: options.paused,
  };
}

export function toRetryPolicy(retry: z.output<typeof retrySchema> | undefined): RetryPolicy {
  if (!retry) return DEFAULT_POLICY.retry;
  const base = retry.schedule ?? DEFAULT_SCHEDULE_MS;
  const waits = retry.attempts === undefined ? base.length : retry.attempts - 1;
  const schedule = Array.from({ length: waits }, (_, i) => base[Math.min(i, base.length - 1)]!);
  return { schedule, jitter: retry.jitter };
}
