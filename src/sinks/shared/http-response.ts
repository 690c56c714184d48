import { describeFetchError } from '../../fetch-error.js';
import { errorForStatus, RetryableError } from '../errors.js';

/** An error page can be megabytes; only its start is read, so a receiver cannot hog memory or time. */
const ERROR_BODY_BYTES = 4 * 1024;
/** A receiver asking for more than a day is more likely wrong than serious; the backoff schedule takes over. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The three forms of an HTTP-date (RFC 9110 section 5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime
 * forms that recipients must still accept. Checked by shape first because `Date.parse` accepts "12" as a date.
 */
const IMF_OR_RFC850 =
  /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4}|[A-Z][a-z]{5,8}, \d{2}-[A-Z][a-z]{2}-\d{2}) \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

export interface SendOptions {
  /** The worker's signal: its abort reason is what `sendRequest` rejects with. */
  signal: AbortSignal;
  /** The sink's own time-out; when it fires first the attempt fails as retryable. */
  timeoutMs?: number;
  /**
   * The wait a failed reply asks for when it has no `Retry-After`, read from the service's own headers (HubSpot's
   * `X-HubSpot-RateLimit-*`): a 429 pauses the whole sink for that long (docs/reference.md#what-every-sink-shares).
   */
  retryAfterFromHeaders?: (headers: Headers) => number | undefined;
}

/**
 * Performs one attempt and maps its outcome for the delivery worker (docs/reference.md#sinks-and-delivery): 2xx
 * resolves with the Response (the caller consumes or cancels its body); 408, 425, 429, 5xx and network errors throw
 * RetryableError; every other status throws PermanentError. Messages never contain the URL: for some sinks it is the
 * secret.
 */
export async function sendRequest(
  url: string,
  init: RequestInit,
  { signal, timeoutMs, retryAfterFromHeaders }: SendOptions,
): Promise<Response> {
  const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const combined = timeout ? AbortSignal.any([signal, timeout]) : signal;
  const aborted = (cause: unknown): unknown => {
    if (signal.aborted) return signal.reason;
    return new RetryableError(`no answer within ${timeoutMs} ms`, { cause });
  };
  let response: Response;
  try {
    // A 3xx to a POST would be replayed as a GET by fetch (RFC 9110 section 15.4): surface it instead.
    response = await fetch(url, { ...init, redirect: 'manual', signal: combined });
  } catch (err) {
    if (combined.aborted) throw aborted(err);
    throw new RetryableError(`network error: ${hideUrl(describeFetchError(err), url)}`, { cause: err });
  }
  const { status } = response;
  if (status >= 200 && status < 300) return response;

  let excerpt: string;
  try {
    excerpt = await readExcerpt(response);
  } catch (err) {
    if (combined.aborted) throw aborted(err);
    excerpt = '';
  }
  const message = `HTTP ${status}${excerpt ? `: ${hideUrl(excerpt, url)}` : ''}`;
  const hint = status >= 300 && status < 400 ? ' (redirects are not followed; configure the final URL)' : '';
  const retryAfterMs =
    parseRetryAfter(response.headers.get('retry-after')) ?? retryAfterFromHeaders?.(response.headers);
  throw errorForStatus(status, message + hint, { retryAfterMs });
}

/**
 * `Retry-After` (RFC 9110 section 10.2.3) in milliseconds from `now`: delta-seconds or an HTTP-date, capped at
 * a day; a date in the past is 0. Anything else is ignored (undefined) rather than trusted.
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const isDate = IMF_OR_RFC850.test(text) || ASCTIME.test(text);
  // asctime carries no zone but is GMT by definition; Date.parse would read it as local time.
  const at = isDate ? Date.parse(ASCTIME.test(text) ? `${text} GMT` : text) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}

/** The first bytes of the body, whitespace folded, cut to an excerpt fit for an attempt's error column. */
async function readExcerpt(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    // Frees the connection without downloading the rest.
    await reader.cancel().catch(() => undefined);
  }
  const text = new TextDecoder()
    .decode(Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES))
    .replace(/\s+/g, ' ')
    .trim();
  // Cut to its length in the attempt's record by the worker, after the secrets are masked (delivery/attempt-error.ts):
  // a secret across the cut would otherwise keep its first half.
  return text;
}

/** The URL can be the credential (a Slack webhook), so neither its given nor its normalised spelling is shown. */
function hideUrl(text: string, url: string): string {
  const forms = URL.canParse(url) ? [url, new URL(url).href] : [url];
  return forms.reduce((out, form) => out.replaceAll(form, '<url>'), text);
}

/**
 * The wait a rolling rate-limit window asks for, as HubSpot and HighLevel describe theirs: with `remaining` at 0,
 * the window of `interval` milliseconds must pass (held to a minute, so a wrong header cannot pause a sink for
 * hours). Undefined while requests remain, or without the headers.
 */
export function windowWait(headers: Headers, remaining: string, interval: string): number | undefined {
  const number = (name: string) => {
    const value = headers.get(name)?.trim();
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  };
  const ms = number(interval);
  return number(remaining) === 0 && ms !== undefined ? Math.min(ms, 60_000) : undefined;
}
