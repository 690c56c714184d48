import type { HookConfig } from '../config.js';
import { CallhookError } from '../errors.js';
import type { Problem, Scalar } from '../record.js';
import { importUserModule } from '../user-module.js';
import type { CallerHistory } from './history.js';

/** What a user's in-call handler is given: the request normalised like any call, and the caller's history. */
export interface InCallRequest {
  hook: string;
  data: Record<string, Scalar>;
  extra: Record<string, unknown>;
  problems: Problem[];
  history: CallerHistory;
}

/** The default export of a handler module; its JSON-serialisable result is the reply's body. */
export type InCallHandler = (request: InCallRequest, context: { signal: AbortSignal }) => unknown;

/** Loads the handler module of every in-call hook that names one, so a missing or wrong module stops start-up. */
export async function loadInCallHandlers(hooks: Iterable<HookConfig>): Promise<Map<string, InCallHandler>> {
  const handlers = new Map<string, InCallHandler>();
  for (const hook of hooks) {
    if (hook.kind !== 'in-call' || hook.handler === undefined) continue;
    const loaded = await importUserModule<InCallHandler>(
      hook.handler,
      `hooks.${hook.name}.handler`,
      'a function (request, { signal }) => reply',
    );
    handlers.set(hook.name, loaded.default);
  }
  return handlers;
}

/**
 * Runs a handler within the hook's time-out: the AI is waiting on the line. A handler that throws gives 502, one
 * that is late gives 504 and sees its signal aborted; its own message stays in the log, out of the reply, since
 * the caller's AI has no use for it and it may carry what the handler's author would not want read aloud.
 */
export async function runHandler(handler: InCallHandler, request: InCallRequest, timeoutMs: number): Promise<string> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${timeoutMs} ms`));
      reject(new CallhookError('IN_CALL_TIMEOUT', `no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => handler(request, { signal: controller.signal })),
      late,
    ]);
    return JSON.stringify(result ?? {});
  } catch (err) {
    if (err instanceof CallhookError) throw err;
    throw new CallhookError('IN_CALL_FAILED', undefined, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}
