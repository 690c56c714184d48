import { timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';

/**
 * A voice platform that sends a hook its calls (docs/reference.md#other-voice-platforms): how it authenticates a
 * request, checked on the raw bytes before anything is parsed; what its end-of-call event says, mapped onto the
 * recommended parameters; and how its sender signs and behaves, for `callhook simulate --platform` and `replay`. One
 * file a platform; the table is index.ts.
 */

export const PLATFORM_NAMES = ['vapi', 'retell', 'elevenlabs', 'bland'] as const;
export type PlatformName = (typeof PLATFORM_NAMES)[number];

export interface PlatformRequest {
  /** A header's value as received (case-insensitive name); undefined when absent. */
  header(name: string): string | undefined;
  /** The body's bytes exactly as received. */
  body: Uint8Array;
}

/**
 * What a platform's event is to callhook: a call to store, with the fields to normalise (the structured data its
 * analysis extracted, under its own names, and the recommended parameters: `phone_number`, `call_date`,
 * `call_duration` in seconds, `call_summary`, `sentiment_analysis`, `recording_url`) and the rest of the payload, for
 * `extra`; or an event that is not one, answered `ignored`.
 */
export type PlatformEvent =
  | { kind: 'call'; callId: string; fields: Record<string, unknown>; rest: Record<string, unknown> }
  | { kind: 'ignored'; event: string };

/**
 * A call made up by `callhook simulate --platform` (docs/reference.md#other-voice-platforms), for a platform to write as
 * its own events (`sample`): the values the calling service's simulation makes up, in the platform's terms.
 */
export interface SampleCall {
  /** The platform's own id of the call: unique to it, and the same in every event about it. */
  callId: string;
  direction: 'inbound' | 'outbound';
  /** The caller's number, E.164; absent when the platform would not know it (a web call). */
  phoneNumber?: string;
  /** The platform's own number, E.164, that the caller rang or that rang the caller. */
  agentNumber: string;
  /** Epoch ms. */
  startedAt: number;
  endedAt: number;
  summary?: string;
  /** Positive, Neutral or Negative, as a platform's analysis says it. */
  sentiment?: string;
  recordingUrl?: string;
  /** What the platform's analysis extracted, under the names the hook declares (first_name, call_outcome, …). */
  data: Record<string, string | number>;
  /** A few turns, in order (`drop: [transcript]` has something to drop). */
  transcript: { role: 'agent' | 'user'; text: string; secondsFromStart: number }[];
}

export interface ReadContext {
  /** The config's `timezone`: `call_date` is the day the call started there. */
  timezone: string;
}

export interface PlatformType<Options = Record<string, never>> {
  name: PlatformName;
  /** The hook's keys this platform reads besides `platform`, `secret` and `drop`; checked when the config loads. */
  options: z.ZodType<Options>;
  /** The largest body the platform sends; a hook's default body limit. */
  bodyLimitBytes: number;
  /** The event's name, read off the raw bytes' start when it is one whose body is not worth reading (ElevenLabs' audio). */
  skipsBody?(body: Uint8Array): string | undefined;
  /** Why the request is not the platform's (a missing, wrong or stale signature), or undefined when it is. */
  verify(request: PlatformRequest, secret: string, options: Options, now: number): string | undefined;
  read(payload: unknown, context: ReadContext): PlatformEvent;
  /** The headers the platform's sender puts on this body (simulate, replay), signed at `now`. */
  sign(body: string, secret: string, options: Options, now: number): Record<string, string>;
  /** How its sender waits and retries (simulate --platform): a reply later than `timeoutMs`, or a non-2xx, is retried `retries` times. */
  sender: { timeoutMs: number; retries: number };
  /**
   * The events its sender posts about one call, in the order it sends them, the end-of-call one among them, each as
   * the parsed JSON of a body (`callhook simulate --platform`).
   */
  sample(call: SampleCall): unknown[];
}

export function definePlatform<Options>(platform: PlatformType<Options>): PlatformType<Options> {
  return platform;
}

/** Two strings compared in constant time (by their bytes); a length that differs is a mismatch, said at once. */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A value at a path of a parsed payload, or undefined. */
export function at(value: unknown, ...path: string[]): unknown {
  let here = value;
  for (const key of path) {
    if (here === null || typeof here !== 'object' || Array.isArray(here)) return undefined;
    here = (here as Record<string, unknown>)[key];
  }
  return here;
}

/** The object at a path, or an empty one. */
export function objectAt(value: unknown, ...path: string[]): Record<string, unknown> {
  const found = at(value, ...path);
  return found !== null && typeof found === 'object' && !Array.isArray(found) ? (found as Record<string, unknown>) : {};
}

/** The calendar day of an instant in a time zone, `YYYY-MM-DD`; undefined for what is not an instant. */
export function dayIn(instant: unknown, timezone: string): string | undefined {
  const ms = typeof instant === 'number' ? instant : typeof instant === 'string' ? Date.parse(instant) : Number.NaN;
  if (!Number.isFinite(ms)) return undefined;
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(ms);
}

/** Only the fields that have a value: a platform that leaves one out leaves the parameter missing, not `undefined`. */
export function present(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
}

/**
 * A timestamp as a platform sends it, in seconds or milliseconds since the epoch, as epoch ms; undefined for one that
 * is neither.
 */
export function epochMs(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,16}$/.test(text.trim())) return undefined;
  const n = Number(text.trim());
  // Before 2001-09-09 in ms is a time in seconds: no platform signs a request sent in 1970.
  return n < 1e12 ? n * 1000 : n;
}
