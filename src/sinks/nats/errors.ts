import { JetStreamApiError } from '@nats-io/jetstream';
import {
  AuthorizationError,
  InvalidSubjectError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { errorForStatus, PermanentError, RetryableError } from '../errors.js';

/**
 * What the NATS client threw, as a delivery outcome (docs/reference.md#sinks-and-delivery and
 * docs/reference.md#queues-and-databases): worth trying again (the server is unreachable, the connection dropped, no
 * acknowledgement in time, JetStream answered 503), or never going to succeed (no stream listens on the subject,
 * credentials or permissions refused, an invalid subject, a JetStream 4xx). `context` says what was being done and
 * where, never with credentials; the client's own text follows.
 */
export function natsError(err: unknown, context: string, { noResponders }: { noResponders: string }): Error {
  if (err instanceof RetryableError || err instanceof PermanentError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // A JetStream request nobody answers: the server sends a 503 status at once (no responders) rather than let it
  // time out; the jetstream client rethrows it as "jetstream is not enabled" with the RequestError as its cause.
  if (isNoResponders(err)) return new PermanentError(`${context}: ${noResponders}`, { cause: err });
  if (err instanceof AuthorizationError)
    return new PermanentError(`${context}: the server refused the credentials (${message})`, {
      status: 401,
      cause: err,
    });
  if (err instanceof PermissionViolationError)
    return new PermanentError(`${context}: ${message}`, { status: 403, cause: err });
  if (err instanceof InvalidSubjectError) return new PermanentError(`${context}: ${message}`, { cause: err });
  // The stream's own refusal, with an HTTP-like status: 503 (storage full, no leader yet) may pass, a 4xx not.
  if (err instanceof JetStreamApiError)
    return errorForStatus(err.status, `${context}: ${message} (JetStream error ${err.code})`, { cause: err });
  if (err instanceof TimeoutError) return new RetryableError(`${context}: no answer in time`, { cause: err });
  return new RetryableError(`${context}: ${message}`, { cause: err });
}

function isNoResponders(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e instanceof RequestError && e.isNoResponders()) return true;
    if (e.name === 'NoRespondersError') return true;
  }
  return false;
}
