/**
 * One table of every failure the receiver answers, each a stable code, an HTTP status and a message.
 * Replies use the calling service's own Error object (spec section 2.10): {"error": <status>, "message": "…"}.
 */

export const ERRORS = {
  UNAUTHORIZED: { status: 401, message: 'Missing or invalid bearer key in the Authorization header' },
  /** A voice platform's hook (docs/reference.md#other-voice-platforms): its signature or secret is missing, wrong or stale. */
  BAD_SIGNATURE: { status: 401, message: "The request is not signed by the hook's platform" },
  /** docs/reference.md#operators: the request is beyond the role of whoever made it; nothing was changed. */
  FORBIDDEN: { status: 403, message: 'Your role does not allow this' },
  BAD_REQUEST: { status: 400, message: 'Bad request' },
  NOT_FOUND: { status: 404, message: 'Not found' },
  CONFLICT: { status: 409, message: 'Conflict' },
  UNKNOWN_HOOK: { status: 404, message: 'No hook of that name is configured' },
  TOO_MANY_FAILURES: { status: 429, message: 'Too many failed authentications from this address; retry later' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method not allowed: use POST, PUT, GET or DELETE' },
  BAD_BODY: { status: 400, message: 'The request body cannot be parsed' },
  BAD_QUERY: { status: 400, message: 'The query string cannot be parsed' },
  BODY_TOO_LARGE: { status: 413, message: 'The request body is larger than the limit' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message:
      'Unsupported content type: send application/json, application/x-www-form-urlencoded or multipart/form-data',
  },
  FILE_PART: { status: 415, message: 'File parts are not accepted on this hook' },
  STORE_UNAVAILABLE: { status: 503, message: 'The store cannot commit the call right now' },
  IN_CALL_FAILED: { status: 502, message: 'The in-call handler failed' },
  IN_CALL_TIMEOUT: { status: 504, message: 'The in-call handler did not answer in time' },
  INTERNAL: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorBody {
  error: number;
  message: string;
}

export class CallhookError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** What narrows the table's message to this case, e.g. which limit or which byte. */
  readonly detail: string | undefined;

  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown }) {
    super(detail ? `${ERRORS[code].message}: ${detail}` : ERRORS[code].message, options);
    this.name = 'CallhookError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.detail = detail;
  }

  toBody(): ErrorBody {
    return { error: this.status, message: this.message };
  }
}

export function errorBody(code: ErrorCode, detail?: string): ErrorBody {
  return new CallhookError(code, detail).toBody();
}
