import { setTimeout as sleep, setImmediate as yieldToIo } from 'node:timers/promises';
import { buildRequest } from '../cli/fixtures.js';
import { describeFetchError } from '../fetch-error.js';
import { SOURCE_HEADER } from '../intake/parse/request-fields.js';
import { type Planned, type PlanOptions, planRequests } from './plan.js';
import { type Attempt, type Outcome, type SimulateSummary, tally } from './summary.js';

/**
 * Plays the calling service's end-of-call sender (spec 6.3): one request per call with the configured method,
 * headers and query parameters; the body serialised by Content-Type, none for GET and DELETE (their fields go in
 * the query string); exactly one attempt, failed after 10 seconds (rule 8) or on any non-2xx (rule 7).
 */

export { ENCODINGS, type Encoding, METHODS, type Method, type Planned, plan } from './plan.js';
export type { Failure, SimulateSummary } from './summary.js';

export interface SimulateOptions extends PlanOptions {
  /** The receiver's base URL (`/webhooks/<hook>` is added) or a full webhook URL. */
  url: string;
  key: string | undefined;
  /** Requests started per second, each without waiting for the previous reply. */
  rate: number;
  timeoutMs?: number;
  onProgress?: (done: number, total: number) => void;
}

/** Spec 6.3 rule 8. */
const SENDER_TIMEOUT_MS = 10_000;

export async function simulate(options: SimulateOptions): Promise<SimulateSummary> {
  const { rate, key, timeoutMs = SENDER_TIMEOUT_MS, onProgress } = options;
  const { base, hook } = target(options.url, options.hook);
  let done = 0;
  return paced(
    planRequests({ ...options, hook }),
    rate,
    (planned) => send(planned, base, key, timeoutMs),
    () => onProgress?.(++done, options.count),
  );
}

/**
 * Sends each item as it comes, on a fixed schedule of `rate` a second from the start, and counts what came of each.
 * Only what is in flight is held: a run of millions of calls needs no more memory than one of hundreds.
 */
export async function paced<T>(
  items: Iterable<T>,
  rate: number,
  send: (item: T) => Promise<Outcome>,
  onOutcome?: (outcome: Outcome) => void,
): Promise<SimulateSummary> {
  if (!(rate > 0)) throw new Error(`simulate needs a rate above 0, not ${rate}`);
  const counted = tally();
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  let index = 0;
  for (const item of items) {
    // On schedule from the start, not from the last reply: a slow receiver does not slow the sender down.
    const due = started + (index++ * 1000) / rate - performance.now();
    // Behind schedule, the sends still take turns with the replies: a loop that never yields would start every
    // remaining request before reading one reply.
    if (due > 0) await sleep(due);
    else await yieldToIo();
    const sending = send(item).then((outcome) => {
      counted.add(outcome);
      onOutcome?.(outcome);
    });
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  }
  await Promise.all(inFlight);
  return counted.summary(performance.now() - started);
}

/** Exactly one attempt (spec 6.3 rule 6): whatever happens is the outcome, never a reason to try again. */
async function send(planned: Planned, base: string, key: string | undefined, timeoutMs: number): Promise<Outcome> {
  const { url, init } = buildRequest(planned.fixture, base, key);
  // docs/reference.md#normalising: what simulate stores says `source: simulate`, so a load test can be kept from real
  // sinks.
  if (!init.headers.has(SOURCE_HEADER)) init.headers.set(SOURCE_HEADER, 'simulate');
  return { planned, ...(await attempt(url, init, timeoutMs)) };
}

/** One request, and what came of it: a reply with its latency, no reply within `timeoutMs`, or a network error. */
export async function attempt(url: string, init: RequestInit, timeoutMs: number): Promise<Attempt> {
  const t0 = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    // The time-out covers the body too: a reply that stalls half-way is as late as none.
    const body = await response.text();
    return { status: response.status, body, latencyMs: performance.now() - t0 };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { status: 'timeout', body: `no reply within ${timeoutMs} ms` };
    return { status: 'network', body: describeFetchError(err) };
  }
}

/** A full webhook URL names its hook; a base URL gets `/webhooks/<hook>`. */
export function target(url: string, hook: string | undefined): { base: string; hook: string } {
  const match = /^(.*?)\/webhooks\/([^/?#]+)\/?$/.exec(url);
  if (match) return { base: match[1]!, hook: hook ?? decodeURIComponent(match[2]!) };
  return { base: url, hook: hook ?? 'end-of-call' };
}
