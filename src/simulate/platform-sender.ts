import { SOURCE_HEADER } from '../intake/parse/request-fields.js';
import type { PlatformType } from '../platforms/platform.js';
import { pick, seeded, syntheticCall } from './generate.js';
import { sampleCall } from './platform-calls.js';
import { attempt, paced, target } from './simulate.js';
import type { Attempt, Outcome, Sent, SimulateSummary } from './summary.js';

/**
 * `callhook simulate --platform NAME` (docs/reference.md#other-voice-platforms): plays a voice platform's sender instead
 * of the calling service's. Each made-up call becomes the events the platform posts about it (its `sample`), each a
 * JSON body signed as the platform signs it at the moment it is sent; a reply later than the platform's time-out, a
 * network error or a non-2xx is sent again, re-signed, as many times as the platform retries, and only a delivery whose
 * every attempt failed is a lost call.
 */

export interface PlatformSimulateOptions {
  /** The receiver's base URL (`/webhooks/<hook>` is added) or a full webhook URL. */
  url: string;
  hook: string;
  // biome-ignore lint/suspicious/noExplicitAny: each platform has options of its own type, checked by its own schema.
  platform: PlatformType<any>;
  secret: string;
  /** The hook's platform options, as the platform's schema gave them. */
  options: unknown;
  /** Calls to make up; each is one or more requests (the platform's events), and some are sent again. */
  count: number;
  /** Requests started per second. */
  rate: number;
  /** Each call's chance of having one of the run's earlier events sent again, re-signed. */
  duplicates: number;
  /** Each value's chance of being left out of the analysis (the AI found nothing). */
  empty: number;
  seed?: number;
  /** The day the run's calls end on, `YYYY-MM-DD`; today (UTC) unless given. */
  today?: string;
  /** The platform's own unless given. */
  timeoutMs?: number;
  retries?: number;
  /** After each delivery's last attempt, with how many deliveries are done. */
  onProgress?: (done: number) => void;
}

/** One event to deliver: its JSON body, signed afresh at each attempt. */
export interface PlatformSend extends Sent {
  body: string;
}

/** Repeats are drawn from the latest sends: a long run keeps no more than these in memory. */
const REPEAT_WINDOW = 10_000;

export async function simulatePlatform(options: PlatformSimulateOptions): Promise<SimulateSummary> {
  const { platform, secret, rate, onProgress } = options;
  const { timeoutMs = platform.sender.timeoutMs, retries = platform.sender.retries } = options;
  const { base, hook } = target(options.url, options.hook);
  const url = new URL(`webhooks/${encodeURIComponent(hook)}`, base.endsWith('/') ? base : `${base}/`).toString();
  let done = 0;
  return paced(
    platformSends(options),
    rate,
    async (send): Promise<Outcome> => {
      const earlier: Attempt[] = [];
      for (;;) {
        // Signed when it is sent: a signature carries its time, and a retry is signed again.
        const headers = {
          'content-type': 'application/json',
          // docs/reference.md#test-traffic: what simulate stores says `source: simulate`.
          [SOURCE_HEADER]: 'simulate',
          ...platform.sign(send.body, secret, options.options, Date.now()),
        };
        const result = await attempt(url, { method: 'POST', headers, body: send.body }, timeoutMs);
        const delivered = typeof result.status === 'number' && result.status >= 200 && result.status < 300;
        if (delivered || earlier.length >= retries) return { planned: send, ...result, earlier };
        earlier.push(result);
      }
    },
    () => onProgress?.(++done),
  );
}

/** The requests of a run, in order: each call's events, and at the chosen rate an earlier event again. */
export function* platformSends({
  platform,
  count,
  duplicates,
  empty,
  seed = Date.now() % 2 ** 31,
  today = new Date().toISOString().slice(0, 10),
}: Pick<
  PlatformSimulateOptions,
  'platform' | 'count' | 'duplicates' | 'empty' | 'seed' | 'today'
>): Generator<PlatformSend> {
  const sample = platform.sample.bind(platform);
  const random = seeded(seed);
  const run = seed.toString(36);
  const recent: PlatformSend[] = [];
  let sent = 0;
  for (let n = 0; n < count; n++) {
    const call = sampleCall(syntheticCall(random, n, { empty, run, today }), random, today);
    const events = sample(call).map(
      (event, i): PlatformSend => ({
        callId: call.callId,
        method: 'POST',
        encoding: 'json',
        repeat: false,
        followUp: i > 0,
        body: JSON.stringify(event),
      }),
    );
    for (const send of events) {
      if (recent.length < REPEAT_WINDOW) recent.push(send);
      else recent[sent % REPEAT_WINDOW] = send;
      sent++;
      yield send;
    }
    // A platform that sends an event again (its retry of a reply it never saw) sends the same body.
    if (random() < duplicates) yield { ...pick(random, recent), repeat: true, followUp: false };
  }
}
