import { errorObjectSchema } from './schemas.js';

/**
 * A failed call to the calling service. `status` is the HTTP status, or 0 when no reply came (network error,
 * time-out); `code` is the `error` of the service's Error object (spec 2.10) when the body was one. The spec lists
 * no status codes (section 7), so callers decide by `status` alone. No message ever holds the API key.
 */
export class CallingServiceError extends Error {
  readonly status: number;
  readonly code: number | undefined;
  /** The reply's Retry-After header as sent (seconds or an HTTP-date), for a caller that schedules its own retry. */
  readonly retryAfter: string | undefined;

  constructor(
    message: string,
    { status, code, retryAfter, cause }: { status: number; code?: number; retryAfter?: string; cause?: unknown },
  ) {
    super(message, { cause });
    this.name = 'CallingServiceError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** `HTTP <status>: <message>`, or the message alone where it would say no more (no reply, or no Error object). */
  get statusLine(): string {
    const status = `HTTP ${this.status}`;
    return this.status === 0 || this.message === status ? this.message : `${status}: ${this.message}`;
  }

  /**
   * From a non-2xx reply: the Error object's message when the body is one, else `HTTP <status>` (an error page is
   * not repeated: it may echo the request). `secret`, the API key, is cut out should the service echo it.
   */
  static fromReply(
    status: number,
    body: string,
    { secret, retryAfter }: { secret?: string; retryAfter?: string } = {},
  ): CallingServiceError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const object = errorObjectSchema.safeParse(parsed);
    if (!object.success) return new CallingServiceError(`HTTP ${status}`, { status, retryAfter });
    const message = secret ? object.data.message.replaceAll(secret, '[api key]') : object.data.message;
    return new CallingServiceError(message || `HTTP ${status}`, { status, code: object.data.error, retryAfter });
  }
}
