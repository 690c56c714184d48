import { parentPort, Worker } from 'node:worker_threads';
// For its side effect: the process's id state is shared with the threads started here (see ids.ts), so it must
// exist on this thread before the first of them starts, whatever else this process has loaded by then.
import '../../ids.js';
import { perTurn } from './per-turn.js';

/**
 * The SQLite store's threads (the reader, and the writer intake/thread.ts starts) and how the event loop talks to them.
 * A call goes out with the other calls of the same turn in one message, and comes back with the others that settled in
 * the same turn of the thread in one reply: a message between threads costs about what an insert does. A thread that
 * fails is not worth failing requests for: the calls it held are refused, and from then on the caller does the work in
 * place, on the event loop.
 */

/** Each call beside its id, not merged with it: a spread with a property after it costs about 0.5 µs on Node 20. */
export type ThreadRequest<C> = { calls: { id: number; call: C }[] } | { close: true };
export type ThreadResult = { id: number; value: unknown } | { id: number; error: { message: string; code?: unknown } };
export interface ThreadReply {
  results: ThreadResult[];
}

export interface ThreadClient<C> {
  /** The thread's answer to the call; undefined when the thread cannot take it, and the caller does it in place. */
  call(call: C): Promise<unknown> | undefined;
  /** Waits for the calls under way, then has the thread close its connection and end. */
  close(): Promise<void>;
}

export interface ThreadOptions {
  thread: 'reader' | 'writer';
  /** The thread's module, by its name without extension, beside `besides` (the caller's import.meta.url). */
  module: string;
  besides: string;
  settings: unknown;
  /** What goes back to the event loop when the thread fails, for the warning: "reads", "writes". */
  work: string;
}

interface Waiting {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/** The thread starts with the first call, so a command that never needs it never starts it. */
export function threadClient<C extends object>({
  thread,
  module,
  besides,
  settings,
  work,
}: ThreadOptions): ThreadClient<C> {
  const waiting = new Map<number, Waiting>();
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  /** Failed or closing: no call goes to the thread any more. */
  let done = false;
  let next = 0;
  let drained: (() => void) | undefined;

  // Whether the calls it held were carried out before the thread died is unknown: they are refused, never answered.
  const fail = (err: Error) => {
    if (!done) warnThreadFailed(err, `${work} are made on the event loop from now on`);
    done = true;
    worker = undefined;
    for (const pending of waiting.values()) pending.reject(err);
    waiting.clear();
    drained?.();
  };

  const start = (): Worker => {
    const w = startThread(module, besides, settings);
    // An idle thread does not keep the process alive; a call waiting for its answer does.
    w.unref();
    w.on('message', ({ results }: ThreadReply) => {
      for (const result of results) {
        const pending = waiting.get(result.id);
        waiting.delete(result.id);
        if ('error' in result)
          pending?.reject(Object.assign(new Error(result.error.message), { code: result.error.code }));
        else pending?.resolve(result.value);
      }
      if (waiting.size > 0) return;
      w.unref();
      drained?.();
    });
    w.on('error', (err) => fail(threadFailure(thread, err)));
    exited = new Promise((resolve) =>
      w.once('exit', (code) => (fail(new Error(`the SQLite ${thread} thread stopped (exit code ${code})`)), resolve())),
    );
    return w;
  };

  // A thread that failed meanwhile gets nothing: its calls were refused.
  const send = perTurn<{ id: number; call: C }>((calls) => worker?.postMessage({ calls } satisfies ThreadRequest<C>));

  return {
    call(call) {
      if (done) return undefined;
      let w: Worker;
      try {
        w = worker ??= start();
      } catch (err) {
        fail(threadFailure(thread, err)); // e.g. run from the sources without tsx to load the thread's module
        return undefined;
      }
      return new Promise((resolve, reject) => {
        const id = next++;
        waiting.set(id, { resolve, reject });
        if (waiting.size === 1) w.ref();
        send({ id, call });
      });
    },
    async close() {
      const w = worker;
      done = true;
      if (!w) return;
      if (waiting.size > 0) await new Promise<void>((resolve) => (drained = resolve));
      w.ref();
      w.postMessage({ close: true } satisfies ThreadRequest<C>);
      await exited;
    },
  };
}

/**
 * Inside a thread: answers each call with `answer` (which may return a promise). The calls that settle in one turn
 * go back in one reply, whichever message brought them: a call is never held for a slower one of its message. On
 * close it runs `close` and lets the thread end.
 */
export function answerCalls<C>(answer: (call: C) => unknown, close: () => void): void {
  const port = parentPort!;
  const reply = perTurn<ThreadResult>((results) => port.postMessage({ results } satisfies ThreadReply));
  port.on('message', (request: ThreadRequest<C>) => {
    if ('close' in request) {
      // The caller sends it once every call has its answer; a turn later all the same, behind any write still queued.
      setImmediate(() => {
        close();
        port.close();
      });
      return;
    }
    for (const { id, call } of request.calls) {
      new Promise((resolve) => resolve(answer(call))).then(
        (value) => reply({ id, value }),
        (err: unknown) =>
          reply({
            id,
            error: {
              message: err instanceof Error ? err.message : String(err),
              code: (err as { code?: unknown }).code,
            },
          }),
      );
    }
  });
}

/**
 * Starts a worker thread on a module beside the caller. Built, that module is JavaScript and runs as it is. From
 * the sources (`npm start`, the tests), it is TypeScript, which a worker cannot load by itself: the thread first
 * registers tsx's loader (a development dependency, as the sources are), then imports it.
 */
function startThread(name: string, besides: string, workerData: unknown): Worker {
  const fromSources = besides.endsWith('.ts');
  const entry = new URL(`./${name}${fromSources ? '.ts' : '.js'}`, besides);
  if (!fromSources) return new Worker(entry, { workerData });
  // Resolved here, from the project, not from wherever the process was started.
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * A thread's failure as an Error of this thread. An error thrown in a thread arrives as a copy; one of a class the
 * copy does not know (SqliteError) arrives as a plain object that keeps only its code.
 */
function threadFailure(thread: string, err: unknown): Error {
  const copy = (typeof err === 'object' && err !== null ? err : {}) as { message?: unknown; code?: unknown };
  const why = typeof copy.message === 'string' ? copy.message : typeof copy.code === 'string' ? copy.code : String(err);
  return new Error(`the SQLite ${thread} thread failed: ${why}`);
}

/**
 * Said once when a thread fails and its work goes back to the event loop: the process keeps serving, slower, and
 * whoever reads its stderr should know why. A warning, since the store has no logger of its own.
 */
function warnThreadFailed(reason: Error, fallback: string): void {
  process.emitWarning(`${reason.message}; ${fallback}`, { code: 'CALLHOOK_THREAD_FAILED' });
}
