import type { Config, HookConfig } from '../config.js';
import { compileWhen, type Filter } from '../delivery/filter.js';
import { CallhookError, type ErrorCode } from '../errors.js';
import { commitCall, compileHooks, prepareCall, type Hook, type IntakeReply } from '../intake.js';
import type { ExtendWriter, WriterExtension } from '../store/sqlite-writer.js';
import type { CommitInput, CommitResult, Store } from '../store/store.js';
import { receiptOf, requestFields, type WebhookRequest } from './request-fields.js';

/**
 * An end-of-call request from bytes to its committed record: read the query and body, normalise, commit. It needs
 * no HTTP framework, so it runs where the store commits: on the SQLite writer's thread, beside the group commit,
 * or on the event loop for PostgreSQL and in-memory stores.
 */

/** The reply, or why the request was refused; plain data, as it comes back from a thread. */
export type RequestOutcome = { reply: IntakeReply } | { refused: { code: ErrorCode; detail: string | undefined } };

export interface RequestIntakeDeps {
  hooks: ReadonlyMap<string, Hook>;
  commit: (input: CommitInput) => Promise<CommitResult>;
}

export type IngestRequest = (request: WebhookRequest) => Promise<RequestOutcome>;

/** Where a request is ingested: on SQLite's writer thread when it takes it (store.toWriter), else here. */
export function requestIntakeOn(store: Store, hooks: ReadonlyMap<string, Hook>): IngestRequest {
  const here = createRequestIntake({ hooks, commit: (input) => store.commitCall(input) });
  return (request) => (store.toWriter?.(request) as Promise<RequestOutcome> | undefined) ?? here(request);
}

/**
 * A refused request is answered without a write here: the route keeps its receipt, with the raw bytes it still
 * holds, through the store's own path for rejections.
 */
export function createRequestIntake({ hooks, commit }: RequestIntakeDeps): IngestRequest {
  return async function ingestRequest(request) {
    const hook = hooks.get(request.hook);
    if (!hook) return { refused: { code: 'UNKNOWN_HOOK', detail: request.hook } };
    let read: Awaited<ReturnType<typeof requestFields>>;
    try {
      read = await requestFields(request, hook.config.allow_files);
    } catch (err) {
      if (err instanceof CallhookError) return { refused: { code: err.code, detail: err.detail } };
      throw err;
    }
    // The bytes and query ride along for the receipt of a duplicate, which keeps them (store.ts Receipt.rawBody).
    const receipt = { ...receiptOf(request, request.body.byteLength), rawBody: request.body, query: request.search };
    const call = prepareCall({ hook, ...read, source: request.source, receipt, receivedAt: new Date(request.receivedAt), ingests: request.ingests });
    return { reply: await commitCall(hook, call, commit) };
  };
}

/** What the writer's thread needs to build the hooks: the config's plain data, less the keys it never checks. */
interface IntakeSettings {
  hooks: [string, HookConfig][];
  sinks: { name: string; when: Filter | undefined }[];
  phoneRegion: string;
  dateOrder: Config['dateOrder'];
}

/**
 * This module as an extension of SQLite's writer thread (store/sqlite-writer.ts), which loads it by its URL. The
 * thread builds its own hooks from the same config, as the event loop does: compiled parameters and filters are
 * functions, which cannot cross to it.
 */
export function requestIntakeExtension(config: Pick<Config, 'hooks' | 'phoneRegion' | 'dateOrder'>, sinks: readonly { name: string; when: Filter | undefined }[]): WriterExtension {
  const settings: IntakeSettings = {
    hooks: [...config.hooks].map(([name, hook]) => [name, { ...hook, keys: [] }]),
    sinks: sinks.map(({ name, when }) => ({ name, when })),
    phoneRegion: config.phoneRegion,
    dateOrder: config.dateOrder,
  };
  return { module: import.meta.url, settings };
}

/** Run on the writer's thread: `commit` joins its group commit. */
export const extendWriter: ExtendWriter = (settings, commit) => {
  const { hooks, sinks, phoneRegion, dateOrder } = settings as IntakeSettings;
  const filters = sinks.map(({ name, when }) => ({ name, accepts: compileWhen(when) }));
  const ingest = createRequestIntake({ hooks: compileHooks({ hooks: new Map(hooks), phoneRegion, dateOrder }, filters), commit });
  return (request) => ingest(request as WebhookRequest);
};
