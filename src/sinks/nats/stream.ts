import { JetStreamApiCodes, JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, nanos } from '@nats-io/transport-node';

/**
 * The nats sink's `stream` option (docs/reference.md#queues-and-databases): a stream that exists is used as it is, with
 * its own subjects and its own duplicate window; a missing one is created to listen on the sink's subject, each `{{ …
 * }}` as `*`, with a duplicate window of 24 hours.
 */

/**
 * How long the stream remembers a `Nats-Msg-Id` and drops a repeat (the server's default is 2 minutes,
 * https://docs.nats.io/using-nats/developer/develop_jetstream/model_deep_dive#message-deduplication). 24 hours outlasts
 * the default retry schedule (8 attempts over about 12 hours, docs/reference.md#sinks-and-delivery), so a retry whose
 * acknowledgement was lost, or a delivery repeated after a crash, is dropped; a redeliver by hand later than that adds
 * a message.
 */
export const DUPLICATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** nats-server's JSStreamNameExistErr: "stream name already in use with a different configuration". */
const STREAM_NAME_EXISTS = 10058;

/** Makes sure stream `name` exists, creating it to listen on `filter`; rejects with the server's error. */
export async function ensureStream(nc: NatsConnection, name: string, filter: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  try {
    await jsm.streams.info(name);
    return;
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
  }
  try {
    await jsm.streams.add({ name, subjects: [filter], duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
  } catch (err) {
    // Another replica made it between our look and our add: it exists, which is all this wanted.
    if (err instanceof JetStreamApiError && err.code === STREAM_NAME_EXISTS) return;
    throw err;
  }
}

/**
 * Why a stream name is not one, or undefined: "Names cannot contain whitespace, `.`, `*`, `>`, path separators
 * (forward or backwards slash), and non-printable characters" (https://docs.nats.io/running-a-nats-service/
 * nats_admin/jetstream_admin/naming).
 */
export function streamNameProblem(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if (/[\s.*>/\\]|\p{Cc}/u.test(name)) return 'must not hold whitespace, ., *, >, / or \\, or a control character';
  return undefined;
}
