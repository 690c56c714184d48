import type { Config, HookConfig } from '../config.js';
import type { SinkWhen } from '../routing/routes.js';
import { threadClient } from '../store/sqlite/thread.js';
import type { RemoteWrite, StoreWrite } from '../store/sqlite/writer.js';
import type { WebhookRequest } from './parse/request-fields.js';
import type { IngestOnThread, RequestOutcome } from './request.js';

/**
 * The thread that writes a SQLite store's file in `serve` (writer-thread.ts): it runs the store's writes, and the
 * webhook intake beside them, so a request parsed and normalised there leaves the event loop only HTTP to do and
 * its commit joins the group commit of its turn. Measured (docs/performance.md): the event loop and this thread
 * share a call's work, and the fsync waits on this thread, not on the replies.
 *
 * The thread starts with the first message, so a `serve` that never writes never starts it. When it fails, the
 * messages it held are refused and from then on both the store and the intake work in place, on the event loop.
 */

/** A message to the writer's thread: a store write, or a webhook request to ingest. */
export type WriterMessage = StoreWrite | { ingest: WebhookRequest };

/** What the thread needs to build its store connection and its hooks: plain data, as it crosses to it. */
export interface WriterSettings {
  path: string;
  intake: IntakeSettings;
}

/**
 * The config's hooks less the keys the thread never checks, and each sink's `when` and test-traffic rule: compiled on
 * the thread.
 */
export interface IntakeSettings {
  hooks: [string, HookConfig][];
  sinks: SinkWhen[];
  phoneRegion: string;
  dateOrder: Config['dateOrder'];
}

export interface WriterThread {
  /** For the store (store/open.ts): its writes. */
  write: RemoteWrite;
  /** A request from bytes to its reply, for the intake serve builds (intake.ts) and the routes that share it. */
  ingest: IngestOnThread;
  /** Waits for the messages under way, then has the thread close its connection and end. */
  close(): Promise<void>;
}

export function writerThread(
  path: string,
  config: Pick<Config, 'hooks' | 'phoneRegion' | 'dateOrder'>,
  sinks: readonly SinkWhen[],
): WriterThread {
  const settings: WriterSettings = {
    path,
    intake: {
      hooks: [...config.hooks].map(([name, hook]) => [name, { ...hook, keys: [] }]),
      sinks: sinks.map(({ name, when, testTraffic }) => ({ name, when, testTraffic })),
      phoneRegion: config.phoneRegion,
      dateOrder: config.dateOrder,
    },
  };
  const thread = threadClient<WriterMessage>({
    thread: 'writer',
    module: 'writer-thread',
    besides: import.meta.url,
    settings,
    work: 'writes',
  });
  return {
    write: (write) => thread.call(write),
    ingest: (request) => thread.call({ ingest: request }) as Promise<RequestOutcome> | undefined,
    close: () => thread.close(),
  };
}
