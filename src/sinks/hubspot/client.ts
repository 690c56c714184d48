import { PermanentError, RetryableError } from '../errors.js';
import { sendRequest, windowWait } from '../shared/http-response.js';
import { replyJson, reworded } from '../shared/refusal.js';

/**
 * One HubSpot REST request with the private app's token (https://developers.hubspot.com/docs/api/private-apps:
 * `Authorization: Bearer <token>`), the reply's JSON or an error the worker classifies
 * (docs/reference.md#sinks-and-delivery, docs/reference.md#queues-and-databases and docs/reference.md#crm-sinks). A
 * refused request's error says what HubSpot's own JSON body says (`status`, `message`, `correlationId`, `category`,
 * https://developers.hubspot.com/docs/api/error-handling), so an expired or revoked token (401 `EXPIRED_AUTHENTICATION`
 * / `INVALID_AUTHENTICATION`), a missing scope (403 `MISSING_SCOPES`) or an unknown property (400 `VALIDATION_ERROR`)
 * is dead with HubSpot's words; the token itself never enters a message.
 */

export interface HubSpotClient {
  /** `body` undefined sends none (the v4 associations' PUT). */
  request<T>(method: 'POST' | 'PATCH' | 'PUT', path: string, body?: unknown): Promise<T>;
}

export interface ClientOptions {
  apiUrl: string;
  token: string;
  signal: AbortSignal;
}

export function hubspotClient({ apiUrl, token, signal }: ClientOptions): HubSpotClient {
  const base = apiUrl.replace(/\/+$/, '');
  return {
    async request<T>(method: 'POST' | 'PATCH' | 'PUT', path: string, body?: unknown): Promise<T> {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        accept: 'application/json',
        'user-agent': 'callhook',
      };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
      let response: Response;
      try {
        response = await sendRequest(`${base}${path}`, init, { signal, retryAfterFromHeaders: hubspotRetryAfter });
      } catch (err) {
        throw inHubSpotWords(err);
      }
      const text = await response.text();
      try {
        return JSON.parse(text) as T;
      } catch {
        // A 2xx that is not JSON is not HubSpot (a proxy's page): trying again will not turn it into an answer.
        throw new PermanentError(`HubSpot answered ${method} ${path} with ${response.status} and no JSON`);
      }
    },
  };
}

/**
 * The parts of HubSpot's error body worth an operator's reading
 * (https://developers.hubspot.com/docs/api/error-handling).
 */
interface ErrorBody {
  message?: unknown;
  category?: unknown;
  /** Set on a 429 instead of `category` (`RATE_LIMIT`), with `policyName`. */
  errorType?: unknown;
  policyName?: unknown;
  correlationId?: unknown;
  errors?: { message?: unknown; context?: Record<string, unknown> }[];
}

/**
 * sendRequest's error (`HTTP 401: <body excerpt>`) retold from HubSpot's JSON: `HubSpot 401 EXPIRED_AUTHENTICATION:
 * <message> (correlationId …)`, with the scopes a 403 names. A body that is not HubSpot's JSON is left as it came.
 */
function inHubSpotWords(err: unknown): unknown {
  if (!(err instanceof PermanentError || err instanceof RetryableError) || err.status === undefined) return err;
  const reply = replyJson(err);
  const body = reply !== null && typeof reply === 'object' ? (reply as ErrorBody) : undefined;
  if (!body || typeof body.message !== 'string') return err;
  const kind = [body.category, body.errorType].find((v): v is string => typeof v === 'string');
  const scopes = body.errors
    ?.flatMap((e) => Object.values(e.context ?? {}).flat())
    .filter((s): s is string => typeof s === 'string' && /^[a-z-]+(\.[a-z-]+)+$/.test(s));
  const parts = [
    `HubSpot ${err.status}${kind ? ` ${kind}` : ''}: ${body.message.trim()}`,
    scopes?.length ? ` (the token needs ${[...new Set(scopes)].join(' or ')})` : '',
    typeof body.correlationId === 'string' ? ` (correlationId ${body.correlationId})` : '',
  ];
  return reworded(err, parts.join(''), { retryAfterMs: policyWait(body.policyName) });
}

/**
 * The wait a 429 asks for, from HubSpot's rate-limit headers
 * (https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines, "Rate limits"): with
 * `X-HubSpot-RateLimit-Remaining: 0` the rolling window of `X-HubSpot-RateLimit-Interval-Milliseconds` (10 s for
 * private apps) must pass; with `X-HubSpot-RateLimit-Secondly-Remaining: 0`, one second. The search endpoints send none
 * of these headers: their 429 is read from the body's `policyName` instead (policyWait).
 */
export function hubspotRetryAfter(headers: Headers): number | undefined {
  return (
    windowWait(headers, 'x-hubspot-ratelimit-remaining', 'x-hubspot-ratelimit-interval-milliseconds') ??
    (headers.get('x-hubspot-ratelimit-secondly-remaining')?.trim() === '0' ? 1000 : undefined)
  );
}

/**
 * A 429 without the headers (the search endpoints' own limit, per second) names its policy in the body
 * (`"errorType": "RATE_LIMIT", "policyName": "SECONDLY"`): a second, or the ten-second window, is the wait. A
 * `DAILY` policy resets at midnight in the account's time zone, which callhook does not know: the worker's back-off
 * step is the wait then (docs/reference.md#queues-and-databases).
 */
function policyWait(policy: unknown): number | undefined {
  if (policy === 'SECONDLY') return 1000;
  if (policy === 'TEN_SECONDLY_ROLLING') return 10_000;
  return undefined;
}
