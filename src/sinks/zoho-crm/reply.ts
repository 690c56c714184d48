import { errorForStatus, PermanentError, RetryableError } from '../errors.js';
import { replyJson } from '../shared/refusal.js';

/**
 * What Zoho answers, read in one place: the JSON of a refused request (the CRM's `{ code, message, details }`,
 * https://www.zoho.com/crm/developer/docs/api/v6/status-codes.html, or a record's own error inside `data`), the wait
 * a 429 asks for, and the errors the worker classifies, with Zoho's own words and never a secret.
 */

/** Zoho CRM's error object, at the top of a reply or per record in `data`. */
export interface ZohoError {
  code?: string;
  message?: string;
  status?: string;
  details?: { api_name?: string; param?: string; [key: string]: unknown };
}

/**
 * A refused request as sendRequest reports it: its status, the wait it asked for, and Zoho's JSON when it sent some.
 */
export interface Refusal {
  status: number;
  retryAfterMs: number | undefined;
  body: unknown;
}

/**
 * sendRequest throws a classified error whose message is `HTTP <status>: <the reply's first bytes>` (http-response.ts);
 * Zoho's JSON is read back from it, so its code decides what happens next (an expired token, a throttled token
 * request) while the worker's classification stays the house's.
 */
export function refusal(err: unknown): Refusal | undefined {
  if (!(err instanceof RetryableError || err instanceof PermanentError) || err.status === undefined) return undefined;
  const retryAfterMs = err instanceof RetryableError ? err.retryAfterMs : undefined;
  return { status: err.status, retryAfterMs, body: replyJson(err) };
}

/** The error object of a reply: its own, or the first record's (`{ data: [{ code, status: "error", … }] }`). */
export function zohoError(body: unknown): ZohoError | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const top = body as ZohoError & { data?: unknown };
  if (typeof top.code === 'string') return top;
  const first = Array.isArray(top.data) ? (top.data[0] as ZohoError | undefined) : undefined;
  return typeof first?.code === 'string' && first.status === 'error' ? first : undefined;
}

/** `INVALID_DATA: invalid data (Foo)`: Zoho's code, its message, and the field or parameter it names. */
export function describe(error: ZohoError): string {
  const where = error.details?.api_name ?? error.details?.param;
  return [error.code, error.message && `: ${error.message}`, typeof where === 'string' && ` (${where})`]
    .filter(Boolean)
    .join('');
}

/** A refused CRM request as the worker's error: its status kept (429 pauses the sink), its words Zoho's. */
export function crmError(what: string, refused: Refusal, cause: unknown): RetryableError | PermanentError {
  const error = zohoError(refused.body);
  const said = error ? describe(error) : (cause as Error).message.replace(/^HTTP \d+: ?/, '');
  return errorForStatus(refused.status, `Zoho CRM ${what}: HTTP ${refused.status}${said ? ` ${said}` : ''}`, {
    retryAfterMs: refused.retryAfterMs,
    cause,
  });
}

/**
 * The wait a 429 asks for when it has no `Retry-After` (which sendRequest reads first). Zoho CRM's API-limits pages
 * since credits (https://www.zoho.com/crm/developer/docs/api/v6/api-limits.html) name no header; its earlier ones
 * named `X-RATELIMIT-RESET`, the time the limit resets, in epoch milliseconds. It is read as that (or epoch seconds,
 * or a number of seconds from now, by its size); without either header the worker's back-off step is the wait
 * (docs/reference.md#queues-and-databases).
 */
export function zohoRetryAfter(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('x-ratelimit-reset')?.trim();
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  const at = n >= 1e12 ? n : n >= 1e9 ? n * 1000 : now + n * 1000;
  return Math.min(Math.max(0, at - now), 24 * 60 * 60 * 1000);
}

/** A write's reply: one result per record sent (https://www.zoho.com/crm/developer/docs/api/v6/insert-records.html). */
export interface ActionReply {
  data?: { code?: string; status?: string; message?: string; details?: { id?: string; api_name?: string } }[];
}

/** The id of the one record written, or Zoho's own error for it (a reply of 200 or 207 may still refuse the record). */
export function resultId(reply: ActionReply | undefined, what: string): string {
  const result = reply?.data?.[0];
  const error = zohoError(reply);
  if (error) throw new PermanentError(`Zoho CRM refused ${what}: ${describe(error)}`);
  const id = result?.details?.id;
  if (typeof id !== 'string' || id === '') throw new PermanentError(`Zoho CRM wrote ${what} but answered no id`);
  return id;
}
