import { replyJson } from '../shared/refusal.js';

/**
 * Google's own words for a refused request, in place of the JSON excerpt `sendRequest` puts in its errors
 * (`HTTP 403: {"error":{…}}`): the class, status and wait of the error stay as the classifier made them, only the
 * message says what an operator must do.
 */

/**
 * The error object of a Google API (https://cloud.google.com/apis/design/errors#http_mapping):
 * `{ "error": { "code", "message", "status", "details": [{ "@type", "reason", … }] } }`.
 */
export interface GoogleApiError {
  code?: number;
  message?: string;
  status?: string;
  /**
   * The `reason` of an `ErrorInfo` detail: `RATE_LIMIT_EXCEEDED`, `ACCESS_TOKEN_SCOPE_INSUFFICIENT`,
   * `SERVICE_DISABLED`…
   */
  reason?: string;
}

export function googleApiError(err: unknown): GoogleApiError | undefined {
  const reply = replyJson(err);
  const error =
    reply !== null && typeof reply === 'object' && !Array.isArray(reply)
      ? (reply as Record<string, unknown>).error
      : undefined;
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message, status, details } = error as Record<string, unknown>;
  const info = Array.isArray(details)
    ? details.find((d) => typeof (d as { reason?: unknown } | null)?.reason === 'string')
    : undefined;
  return {
    code: typeof code === 'number' ? code : undefined,
    message: typeof message === 'string' ? message : undefined,
    status: typeof status === 'string' ? status : undefined,
    reason: (info as { reason?: string } | undefined)?.reason,
  };
}
