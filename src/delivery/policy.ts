import { z } from 'zod';
import { durationSchema } from '../duration.js';
import { DEFAULT_SCHEDULE_MS, type RetryPolicy } from './backoff.js';

/**
 * What every sink config may say about how it is delivered to, whatever its type (contract section 5):
 * `retry`, `timeout` and `concurrency`. `when` is compiled with the record filters.
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

export const deliveryOptionsSchema = z.strictObject({
  retry: retrySchema.optional(),
  /** How long one attempt may take before it counts as failed and is retried. */
  timeout: durationSchema.default(30_000),
  /** Deliveries of this sink attempted at once. */
  concurrency: z.number().int().min(1).max(256).default(8),
});

export interface DeliveryPolicy {
  retry: RetryPolicy;
  timeoutMs: number;
  concurrency: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = { retry: { schedule: DEFAULT_SCHEDULE_MS, jitter: 0.2 }, timeoutMs: 30_000, concurrency: 8 };

export function toPolicy(options: z.output<typeof deliveryOptionsSchema>): DeliveryPolicy {
  return { retry: toRetryPolicy(options.retry), timeoutMs: options.timeout, concurrency: options.concurrency };
}

function toRetryPolicy(retry: z.output<typeof retrySchema> | undefined): RetryPolicy {
  if (!retry) return DEFAULT_POLICY.retry;
  const base = retry.schedule ?? DEFAULT_SCHEDULE_MS;
  const waits = retry.attempts === undefined ? base.length : retry.attempts - 1;
  const schedule = Array.from({ length: waits }, (_, i) => base[Math.min(i, base.length - 1)]!);
  return { schedule, jitter: retry.jitter };
}
