import { PermanentError, RetryableError } from '../sink.js';

/**
 * Google's own words for a refused request, in place of the JSON excerpt `sendRequest` puts in its errors
 * (`HTTP 403: {"error":{…}}`): the class, status and wait of the error stay as the classifier made them, only the
 * message says what an operator must do.
 */

/** The JSON body of a refused reply, read back from the excerpt in the error's message; undefined when there is none. */
export function replyOf(err: unknown): Record<string, unknown> | undefined {
  if (!(err instanceof RetryableError || err instanceof PermanentError)) return undefined;
  const excerpt = /^HTTP \d{3}: (\{.*\})(?: \(redirects are not followed[^)]*\))?$/s.exec(err.message)?.[1];
  if (!excerpt) return undefined;
  try {
    const parsed: unknown = JSON.parse(excerpt);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The same error with another message: its class, status and wait kept, the original as its cause. */
export function reworded(err: RetryableError | PermanentError, message: string): RetryableError | PermanentError {
  if (err instanceof PermanentError) return new PermanentError(message, { status: err.status, cause: err });
  return new RetryableError(message, { status: err.status, retryAfterMs: err.retryAfterMs, cause: err });
}

/**
 * The error object of a Google API (https://cloud.google.com/apis/design/errors#http_mapping):
 * `{ "error": { "code", "message", "status", "details": [{ "@type", "reason", … }] } }`.
 */
export interface GoogleApiError {
  code?: number;
  message?: string;
  status?: string;
  /** The `reason` of an `ErrorInfo` detail: `RATE_LIMIT_EXCEEDED`, `ACCESS_TOKEN_SCOPE_INSUFFICIENT`, `SERVICE_DISABLED`… */
  reason?: string;
}

export function googleApiError(err: unknown): GoogleApiError | undefined {
  const error = replyOf(err)?.error;
  if (error === null || typeof error !== 'object') return undefined;
  const { code, message, status, details } = error as Record<string, unknown>;
  const info = Array.isArray(details) ? details.find((d) => typeof (d as { reason?: unknown } | null)?.reason === 'string') : undefined;
  return {
    code: typeof code === 'number' ? code : undefined,
    message: typeof message === 'string' ? message : undefined,
    status: typeof status === 'string' ? status : undefined,
    reason: (info as { reason?: string } | undefined)?.reason,
  };
}
