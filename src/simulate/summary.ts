import type { Planned } from './plan.js';

/**
 * What a simulated run saw, counted the way the sender's delivery history would record it (spec 6.3 rules 7
 * and 8): a reply that is not 2xx, a network error or no reply within the time-out is a failed delivery, and
 * with no retries a lost call. A voice platform's sender (docs/reference.md#other-voice-platforms) may try again: every
 * attempt is counted by its status, and only a delivery whose last attempt failed is a failure.
 */

export interface Failure {
  call_id: string;
  /** The HTTP status, or `timeout` / `network`. */
  status: number | 'timeout' | 'network';
  /** The first 200 characters of the reply, or what went wrong. */
  body: string;
  /** How many times it was sent, when the sender retries. */
  attempts?: number;
}

export interface SimulateSummary {
  sent: number;
  /** Distinct calls among the sends. */
  calls: number;
  duplicates_sent: number;
  by_status: Record<string, number>;
  /** The `status` of the 2xx replies; `accepted`, `duplicate` and `held` are always present. */
  by_reply: Record<string, number>;
  by_method: Record<string, number>;
  by_encoding: Record<string, number>;
  /** Attempts made again after a time-out, a network error or a non-2xx (a platform's sender); 0 for the service's. */
  retries: number;
  failures: number;
  /** The first few failures, with what the receiver answered. */
  failed: Failure[];
  latency_ms: { p50: number; p90: number; p99: number; max: number };
  elapsed_ms: number;
  /** Requests per second achieved over the whole run. */
  rate: number;
}

/**
 * What the tally needs of a send: the calling service's planned request, or a platform's event; `followUp` is a
 * platform's later event about a call already counted (it sends several), neither a new call nor a repeat.
 */
export type Sent = Pick<Planned, 'callId' | 'method' | 'encoding' | 'repeat'> & { followUp?: boolean };

/** One attempt's result: a reply (any status) with its latency, or no reply at all. */
export type Attempt =
  | { status: number; body: string; latencyMs: number }
  | { status: 'timeout' | 'network'; body: string };

/** One send's result, its last attempt's, after the attempts that failed before it (`earlier`, a retrying sender's). */
export type Outcome = Attempt & { planned: Sent; earlier?: readonly Attempt[] };

const FAILURES_KEPT = 10;
const BODY_KEPT = 200;

/** Counts outcomes as they arrive; `summary` closes the run. */
export function tally() {
  const latencies: number[] = [];
  const summary: SimulateSummary = {
    sent: 0,
    calls: 0,
    duplicates_sent: 0,
    by_status: {},
    by_reply: { accepted: 0, duplicate: 0, held: 0 },
    by_method: {},
    by_encoding: {},
    retries: 0,
    failures: 0,
    failed: [],
    latency_ms: { p50: 0, p90: 0, p99: 0, max: 0 },
    elapsed_ms: 0,
    rate: 0,
  };

  return {
    add(outcome: Outcome): void {
      const { planned, status, body, earlier = [] } = outcome;
      summary.sent++;
      if (planned.repeat) summary.duplicates_sent++;
      else if (!planned.followUp) summary.calls++;
      count(summary.by_method, planned.method);
      count(summary.by_encoding, planned.encoding);
      summary.retries += earlier.length;
      for (const attempt of [...earlier, outcome]) {
        count(summary.by_status, String(attempt.status));
        if ('latencyMs' in attempt) latencies.push(attempt.latencyMs);
      }
      if (typeof status === 'number' && status >= 200 && status < 300) {
        count(summary.by_reply, replyStatus(body));
        return;
      }
      summary.failures++;
      if (summary.failed.length < FAILURES_KEPT)
        summary.failed.push({
          call_id: planned.callId,
          status,
          body: body.slice(0, BODY_KEPT),
          ...(earlier.length > 0 && { attempts: earlier.length + 1 }),
        });
    },
    summary(elapsedMs: number): SimulateSummary {
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        ...summary,
        latency_ms: {
          p50: percentile(sorted, 0.5),
          p90: percentile(sorted, 0.9),
          p99: percentile(sorted, 0.99),
          max: round(sorted.at(-1) ?? 0),
        },
        elapsed_ms: Math.round(elapsedMs),
        rate: round((summary.sent / Math.max(elapsedMs, 1)) * 1000),
      };
    },
  };
}

/** Nearest-rank percentile of sorted values: a value that was actually seen, never an interpolation. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return round(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!);
}

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

function replyStatus(text: string): string {
  try {
    const status = (JSON.parse(text) as { status?: unknown } | null)?.status;
    return typeof status === 'string' ? status : 'other';
  } catch {
    return 'not json';
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
