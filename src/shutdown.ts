/**
 * How `callhook serve` ends (docs/reference.md#shutdown): the first stop signal, or an error nothing caught, starts
 * one drain; the process exits 0 when a signal's drain ends (1 after an error's). A copy of that signal arriving
 * within RELAY_WINDOW_MS is the same request; any other signal after it forces the exit, saying so, with 1.
 *
 * Written on `process.on` rather than close-with-grace, which served before: its handler of a second signal always
 * ends in `process.exit(1)` (index.js, afterFirstSignal), whatever `onSecondSignal` does, so it cannot tell a relayed
 * copy from an operator's second Ctrl-C; and the one bound it puts on a drain is fixed when it is installed, before
 * the config that sets the grace is read.
 */

/**
 * Copies of one signal that arrive this close together are one request. A process manager that signals the whole
 * group (systemd's `KillMode=control-group`, a terminal's Ctrl-C) reaches node and the npm of `npm start` above it,
 * and npm forwards its copy to node: 3 ms later when measured, later still when node's event loop is busy as they
 * arrive (each is handled after whatever holds the loop). One second leaves room for a loaded machine and is still
 * shorter than an operator's deliberate second signal, sent after reading "draining".
 */
export const RELAY_WINDOW_MS = 1_000;

/**
 * The signals that ask a process to stop (SIGUSR2 is nodemon's restart). Not SIGSEGV, SIGBUS, SIGFPE or SIGILL,
 * which close-with-grace took too: after a real one, Node's docs warn, a JavaScript listener may leave the process
 * hanging instead of dead; nor SIGABRT and SIGTRAP, a native abort and a debugger's trap, which ask for no drain.
 */
const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'] as const;
const ERROR_EVENTS = ['uncaughtException', 'unhandledRejection'] as const;

/** What a forced exit leaves behind, and how it mends (docs/reference.md#shutdown). */
const CUT_SHORT = 'the drain was cut short: deliveries in flight go back to pending when their lease expires';

/** The parts of the process this module uses: a stand-in in its unit test. */
export interface ShutdownHost {
  on(event: string, listener: (value: unknown) => void): unknown;
  removeListener(event: string, listener: (value: unknown) => void): unknown;
  exit(code: number): void;
  write(text: string): void;
  now(): number;
}

export const processHost: ShutdownHost = {
  on: (event, listener) => process.on(event, listener),
  removeListener: (event, listener) => process.removeListener(event, listener),
  exit: (code) => process.exit(code),
  write: (text) => process.stderr.write(text),
  now: () => performance.now(),
};

export interface ShutdownOptions {
  /** Stops the process's work; its rejection is reported, and the exit is 1. */
  drain: () => Promise<void>;
  relayWindowMs?: number;
  host?: ShutdownHost;
}

export interface Shutdown {
  /** Takes the listeners off; a drain under way no longer ends the process (a start-up that failed does). */
  uninstall(): void;
}

export function exitOnShutdown({
  drain,
  relayWindowMs = RELAY_WINDOW_MS,
  host = processHost,
}: ShutdownOptions): Shutdown {
  let installed = true;
  /** What started the drain, and when. */
  let first: { why: string; at: number } | undefined;

  function onSignal(signal: unknown): void {
    const why = String(signal);
    const at = host.now();
    if (first === undefined) {
      first = { why, at };
      host.write(`callhook: ${why} received, draining\n`);
      begin(0);
    } else if (why !== first.why || at - first.at >= relayWindowMs) {
      cutShort(`second ${why}`);
    }
  }

  function onError(err: unknown): void {
    host.write(`callhook: ${describe(err, true)}\n`);
    if (first !== undefined) {
      cutShort('an error while draining');
      return;
    }
    first = { why: 'error', at: host.now() };
    begin(1);
  }

  function begin(code: 0 | 1): void {
    drain().then(
      () => installed && host.exit(code),
      (err: unknown) => installed && cutShort(describe(err, false)),
    );
  }

  function cutShort(why: string): void {
    host.write(`callhook: ${why}; ${CUT_SHORT}\n`);
    host.exit(1);
  }

  for (const signal of STOP_SIGNALS) host.on(signal, onSignal);
  for (const event of ERROR_EVENTS) host.on(event, onError);
  return {
    uninstall() {
      installed = false;
      for (const signal of STOP_SIGNALS) host.removeListener(signal, onSignal);
      for (const event of ERROR_EVENTS) host.removeListener(event, onError);
    },
  };
}

/** Rejects when `promise` has not settled within `ms`: a drain's bound, so nothing it waits on holds it for ever. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still running after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function describe(err: unknown, stack: boolean): string {
  if (!(err instanceof Error)) return String(err);
  return stack ? (err.stack ?? err.message) : err.message;
}
