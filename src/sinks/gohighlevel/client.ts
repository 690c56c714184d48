import { PermanentError, RetryableError } from '../errors.js';
import { sendRequest, windowWait } from '../shared/http-response.js';
import { replyJson, reworded } from '../shared/refusal.js';

/**
 * One HighLevel API 2.0 request (https://marketplace.gohighlevel.com/docs/): a Private Integration token or a
 * sub-account OAuth access token as `Authorization: Bearer`, and the `Version: 2021-07-28` header every contacts
 * endpoint requires (its only allowed value in https://github.com/GoHighLevel/highlevel-api-docs apps/contacts.json).
 * A refused request's error carries HighLevel's own words, read from its documented error bodies
 * (`{ statusCode, message, error }`, `message` a list for a 422), so a revoked token or a missing scope is dead with
 * them; the token itself never enters a message.
 */

export const API_VERSION = '2021-07-28';

export type Method = 'GET' | 'POST' | 'PUT';

export interface GhlClient {
  request<T>(method: Method, path: string, body?: unknown): Promise<T>;
}

export interface ClientOptions {
  apiUrl: string;
  token: string;
  signal: AbortSignal;
}

export function ghlClient({ apiUrl, token, signal }: ClientOptions): GhlClient {
  const base = apiUrl.replace(/\/+$/, '');
  return {
    async request<T>(method: Method, path: string, body?: unknown): Promise<T> {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        version: API_VERSION,
        accept: 'application/json',
        'user-agent': 'callhook',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
      let response: Response;
      try {
        response = await sendRequest(`${base}${path}`, init, { signal, retryAfterFromHeaders: ghlRetryAfter });
      } catch (err) {
        throw inHighLevelWords(err, method, path);
      }
      const text = await response.text();
      try {
        return JSON.parse(text) as T;
      } catch {
        // A 2xx that is not JSON is not HighLevel (a proxy's page): trying again will not turn it into an answer.
        throw new PermanentError(`GoHighLevel answered ${method} ${path} with ${response.status} and no JSON`);
      }
    },
  };
}

/**
 * The wait a 429 asks for when it has no `Retry-After` (https://marketplace.gohighlevel.com/docs/oauth/Faqs, "What
 * are current rate limits for API 2.0?"): the burst limit is 100 requests per 10 seconds per app and location, told by
 * `X-RateLimit-Max`, `X-RateLimit-Remaining` and `X-RateLimit-Interval-Milliseconds`; with none remaining the window
 * must pass. The daily limit (200,000, `X-RateLimit-Daily-Remaining`) has no documented reset time: a 429 for it gets
 * the worker's back-off step, which grows, rather than a 10-second pause that would spend an attempt every 10 s.
 */
export function ghlRetryAfter(headers: Headers): number | undefined {
  return windowWait(headers, 'x-ratelimit-remaining', 'x-ratelimit-interval-milliseconds');
}

/**
 * `HTTP 401: {"statusCode":401,"message":"Invalid JWT","error":"Unauthorized"}` (what sendRequest read) becomes
 * `HTTP 401: Invalid JWT (POST /contacts/upsert)`, keeping the status, the wait and the classification.
 */
function inHighLevelWords(err: unknown, method: Method, path: string): unknown {
  if (!(err instanceof RetryableError || err instanceof PermanentError) || err.status === undefined) return err;
  const said = errorText(replyJson(err));
  if (said === undefined) return err;
  return reworded(err, `HTTP ${err.status}: ${said} (${method} ${path})`);
}

/** The message of a HighLevel error body: `message` (text, or a list from validation), else `msg` or `error`. */
export function errorText(parsed: unknown): string | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { message, msg, error } = parsed as { message?: unknown; msg?: unknown; error?: unknown };
  if (Array.isArray(message) && message.length > 0) return message.map(String).join('; ');
  for (const said of [message, msg, error]) if (typeof said === 'string' && said.trim() !== '') return said.trim();
  return undefined;
}
