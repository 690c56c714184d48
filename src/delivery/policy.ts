import { z } from 'zod';
import { durationSchema } from '../duration.js';
import { DEFAULT_SCHEDULE_MS, type RetryPolicy } from './backoff.js';

/**
 * What every sink config may say about how it is delivered to, whatever its type (contract sections 5 and 9):
 * `retry`, `timeout`, `concurrency`, `rate` and `paused`. `when` is compiled with the record filters.
 */

/**
 * Durations here and everywhere else in the config and the CLI read by one grammar (contract section 7,
 * src/duration.ts); re-exported from here, where config.ts has imported it from.
 */
export { durationSchema } from '../duration.js';

export const retrySchema = z.strictObject({
  /** Attempts in all, the first included. */
  attempts: z.number().int().min(1).max(100).optional(),
  /** Waits between attempts; with `attempts` too, the last wait repeats or the list is cut to fit. */
  schedule: z.array(durationSchema).min(1).optional(),
  jitter: z.number().min(0).max(1).default(0.2),
});

/** Contract section 9: at most `max` deliveries start in any window of `per`, in one process. */
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
  /** Contract section 9: the sink starts paused, unless an operator has paused or resumed it since (the store wins). */
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
  retry: { schedule: DEFAULT_SCHEDULE_MS, jitter: 0.2 },
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

function toRetryPolicy(retry: z.output<typeof retrySchema> | undefined): RetryPolicy {
  if (!retry) return DEFAULT_POLICY.retry;
  const base = retry.schedule ?? DEFAULT_SCHEDULE_MS;
  const waits = retry.attempts === undefined ? base.length : retry.attempts - 1;
  const schedule = Array.from({ length: waits }, (_, i) => base[Math.min(i, base.length - 1)]!);
  return { schedule, jitter: retry.jitter };
}
