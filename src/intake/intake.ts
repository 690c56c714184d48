import type { InCallHandler } from '../in-call/handler.js';
import type { CallStore } from '../store/calls.js';
import { createIntake, type Hook, type IngestFields } from './pipeline.js';
import { createRequestIntake, type IngestOnThread, type IngestRequest } from './request.js';

/**
 * The intake `serve` builds once (main.ts) and hands to everything that stores calls: the webhook route, the
 * refused requests ingested again from the admin API and the dashboard, and reconciliation. So every call is
 * normalised, deduplicated and routed by the same compiled hooks, whichever way it came in.
 */
export interface Intake {
  /** The configured hooks, compiled once (compileHooks), of both kinds. */
  hooks: ReadonlyMap<string, Hook>;
  /** An end-of-call request from bytes to its reply: on SQLite's writer thread when it takes it, else here. */
  ingestRequest: IngestRequest;
  /** Fields already read (reconciliation) to their committed record. */
  ingestFields: IngestFields;
  /** The handler modules of the in-call hooks that name one, by hook (in-call/handler.ts). */
  inCallHandlers?: ReadonlyMap<string, InCallHandler>;
}

export interface IntakeOptions {
  store: Pick<CallStore, 'commitCall'>;
  hooks: ReadonlyMap<string, Hook>;
  /** The intake on SQLite's writer thread, when `serve` started one (thread.ts). */
  onThread?: IngestOnThread;
  /** Told after each commit that created deliveries, so they go out at once rather than at the next poll. */
  onCommitted?: () => void;
  inCallHandlers?: ReadonlyMap<string, InCallHandler>;
}

export function buildIntake({ store, hooks, onThread, onCommitted, inCallHandlers }: IntakeOptions): Intake {
  // What no thread takes is ingested here, on the event loop, committing through the store.
  const here = createRequestIntake({ hooks, commit: (input) => store.commitCall(input) });
  return {
    hooks,
    ingestRequest: async function ingestRequest(request) {
      const outcome = await (onThread?.(request) ?? here(request));
      if ('reply' in outcome && outcome.reply.status === 'accepted') onCommitted?.();
      return outcome;
    },
    ingestFields: createIntake({ store, onCommitted }),
    inCallHandlers,
  };
}
