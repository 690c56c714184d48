import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on a module beside the caller. Built, that module is JavaScript and runs as it is. From
 * the sources (`npm start`, the tests), it is TypeScript, which a worker cannot load by itself: the thread first
 * registers tsx's loader (a development dependency, as the sources are), then imports it.
 */
export function startThread(name: string, besides: string, workerData: unknown): Worker {
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
export function threadFailure(thread: string, err: unknown): Error {
  const copy = (typeof err === 'object' && err !== null ? err : {}) as { message?: unknown; code?: unknown };
  const why = typeof copy.message === 'string' ? copy.message : typeof copy.code === 'string' ? copy.code : String(err);
  return new Error(`the SQLite ${thread} thread failed: ${why}`);
}

/**
 * Said once when a thread fails and its work goes back to the event loop: the process keeps serving, slower, and
 * whoever reads its stderr should know why. A warning, since the store has no logger of its own.
 */
export function warnThreadFailed(reason: Error, fallback: string): void {
  process.emitWarning(`${reason.message}; ${fallback}`, { code: 'CALLHOOK_THREAD_FAILED' });
}
