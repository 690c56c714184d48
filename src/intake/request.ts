import { CallhookError, type ErrorCode } from '../errors.js';
import type { CommitInput, CommitResult } from '../store/calls.js';
import { receiptOf, requestFields, type WebhookRequest } from './parse/request-fields.js';
import { commitCall, type Hook, type IntakeReply, prepareCall } from './pipeline.js';

/**
 * An end-of-call request from bytes to its committed record: read the query and body, normalise, commit. It needs
 * no HTTP framework, so it runs where the store commits: on the SQLite writer's thread beside the group commit
 * (writer-thread.ts), or on the event loop for PostgreSQL and in-memory stores.
 */

/** The reply, or why the request was refused; plain data, as it comes back from a thread. */
export type RequestOutcome = { reply: IntakeReply } | { refused: { code: ErrorCode; detail: string | undefined } };

export type IngestRequest = (request: WebhookRequest) => Promise<RequestOutcome>;

/** The intake on the writer's thread (thread.ts): undefined when there is none, or it cannot take the request. */
export type IngestOnThread = (request: WebhookRequest) => Promise<RequestOutcome> | undefined;

export interface RequestIntakeDeps {
  hooks: ReadonlyMap<string, Hook>;
  commit: (input: CommitInput) => Promise<CommitResult>;
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
    // The bytes and query ride along for the receipt of a duplicate, which keeps them (calls.ts Receipt.rawBody).
    const receipt = receiptOf(request, request.body.byteLength, { rawBody: request.body, query: request.search });
    const call = prepareCall({
      hook,
      ...read,
      source: request.source,
      receipt,
      receivedAt: new Date(request.receivedAt),
      ingests: request.ingests,
    });
    return { reply: await commitCall(hook, call, commit) };
  };
}
