/**
 * The errors a sink throws and one classifier of a delivery's outcome (docs/reference.md#sinks-and-delivery and
 * #queues-and-databases), for every sink and the worker: worth trying again, never going to succeed, or refused for too
 * many requests, with the wait the service gave. A sink maps what its service answered with `errorForStatus`; the
 * worker reads any error with `classify`, so a sink written by a user need not import our error classes: `permanent:
 * true`, a numeric `status` and `retryAfterMs` are read as ours are. Both sides import this module, and it imports
 * neither, so a sink never reaches into delivery/ (docs/design.md).
 */

/** Throw from `deliver` when trying again later may succeed: network errors, 408, 425, 429, 5xx. */
export class RetryableError extends Error {
  readonly status: number | undefined;
  /** From a `Retry-After` header, when the receiver gave one. */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'RetryableError';
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Throw from `deliver` when the same record can never succeed (most 4xx): the delivery is dead at once. */
export class PermanentError extends Error {
  readonly status: number | undefined;

  constructor(message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'PermanentError';
    this.status = options.status;
  }
}

export type Outcome =
  | { kind: 'retry'; error: string; status?: number; retryAfterMs?: number }
  | { kind: 'permanent'; error: string; status?: number }
  /**
   * HTTP 429, or a service's own "too many requests": the whole sink waits (docs/reference.md#queues-and-databases).
   */
  | { kind: 'rate-limited'; error: string; status?: number; retryAfterMs?: number };

/** RFC 9110 section 15: these may succeed later; every other 4xx will fail the same way again. */
const RETRYABLE_STATUSES = new Set([408, 425, 429]);

/** A failed reply that may succeed later: 408, 425, 429 and every 5xx (docs/reference.md#sinks-and-delivery). */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

/**
 * The error a sink throws for a service's failed reply, by its status: a redirect (a POST is never replayed to
 * another URL) and a 4xx other than 408, 425 and 429 will fail again; the rest, and a reply with no status at all,
 * may succeed later.
 */
export function errorForStatus(
  status: number | undefined,
  message: string,
  { retryAfterMs, cause }: { retryAfterMs?: number; cause?: unknown } = {},
): RetryableError | PermanentError {
  if (status !== undefined && status >= 300 && status < 500 && !isRetryableStatus(status))
    return new PermanentError(message, { status, cause });
  return new RetryableError(message, { status, retryAfterMs, cause });
}

export function classify(err: unknown): Outcome {
  const error = err instanceof Error ? err.message : String(err);
  const fields = (typeof err === 'object' && err !== null ? err : {}) as {
    permanent?: unknown;
    status?: unknown;
    retryAfterMs?: unknown;
    rateLimited?: unknown;
  };
  const status = typeof fields.status === 'number' ? fields.status : undefined;
  const retryAfterMs =
    typeof fields.retryAfterMs === 'number' && fields.retryAfterMs >= 0 ? fields.retryAfterMs : undefined;
  const refused = status !== undefined && status >= 400 && status < 500 && !isRetryableStatus(status);
  const permanent = fields.permanent ?? (err instanceof RetryableError ? false : refused);
  if (err instanceof PermanentError || permanent === true) return { kind: 'permanent', error, status };
  if (status === 429 || fields.rateLimited === true) return { kind: 'rate-limited', error, status, retryAfterMs };
  return { kind: 'retry', error, status, retryAfterMs };
}
