import { PermanentError, RetryableError } from '../errors.js';

/**
 * A service's refused reply, read back from the error sendRequest threw (`HTTP 403: <the reply's first bytes>`,
 * http-response.ts), for the sinks that retell it in the service's own words (the CRMs of docs/reference.md#crm-sinks):
 * the classifier's decision (class, status, wait) stays, only the words change.
 */

/** The JSON the reply carried, when its excerpt is JSON; undefined for any other error or body. */
export function replyJson(err: unknown): unknown {
  if (!(err instanceof RetryableError || err instanceof PermanentError) || err.status === undefined) return undefined;
  const excerpt = /^HTTP \d{3}: (.*?)(?: \(redirects are not followed[^)]*\))?$/s.exec(err.message)?.[1];
  return excerpt === undefined ? undefined : parseJson(excerpt);
}

/** JSON.parse that answers undefined for text that is not JSON (a proxy's page, an excerpt cut short). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The same error with another message: its class, status and wait kept, the original as its cause. */
export function reworded(
  err: RetryableError | PermanentError,
  message: string,
  { retryAfterMs }: { retryAfterMs?: number } = {},
): RetryableError | PermanentError {
  if (err instanceof PermanentError) return new PermanentError(message, { status: err.status, cause: err });
  return new RetryableError(message, {
    status: err.status,
    retryAfterMs: err.retryAfterMs ?? retryAfterMs,
    cause: err,
  });
}
