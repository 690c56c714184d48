/**
 * Standard output of a CLI command, and what happens when its reader goes away: every command exits quietly with
 * exit 0 when its output is closed early, `callhook calls list | head` (docs/reference.md#command-line).
 *
 * Node ignores SIGPIPE, so a write to a pipe whose reader has exited fails with EPIPE: the write's callback gets the
 * error, and the stream emits an 'error' that nobody listens to (a stack trace) unless index.ts's `watchStdout`
 * does. Each run has an Output of its own (program.ts): the first EPIPE marks it closed, `write` throws
 * `OutputClosed` so a long writer stops at its next page instead of reading the whole store into nowhere, the
 * command's own `finally` (withStore) still closes the store, and runCli gives exit 0. The next run, in a test's
 * process, starts open.
 */

/** Thrown by `write` once stdout's reader has gone; runCli ends the command quietly with exit 0 on it. */
export class OutputClosed extends Error {
  constructor() {
    super('standard output was closed');
    this.name = 'OutputClosed';
  }
}

export interface Output {
  /**
   * Writes and resolves once the text has been handed on, so a slow reader of the pipe holds the writer back a
   * page at a time and memory stays bounded. Throws OutputClosed once the reader has gone.
   */
  write(text: string): Promise<void>;
  /** One line, as console.log prints it: not waited for, and dropped once the reader has gone. */
  print(line: string): void;
}

/** One run's standard output; `stdout`'s 'error' events are for its owner to listen to (`watchStdout`). */
export function createOutput(stdout: NodeJS.WritableStream): Output {
  let closed = false;

  async function write(text: string): Promise<void> {
    if (closed) throw new OutputClosed();
    await new Promise<void>((resolve, reject) => {
      stdout.write(text, (err) => {
        if (!err) resolve();
        else if (isClosedPipe(err)) {
          closed = true;
          reject(new OutputClosed());
        } else reject(err);
      });
    });
  }

  function print(line: string): void {
    if (closed) return;
    stdout.write(`${line}\n`, (err) => {
      if (err && isClosedPipe(err)) closed = true;
    });
  }

  return { write, print };
}

/**
 * Listens for the process's stdout errors, once (index.ts): an EPIPE is the run's to see on its next write; any
 * other (a full disk under `> file`) goes to `onError`, which ends the process as every other failure does.
 */
export function watchStdout(stdout: NodeJS.WritableStream, onError: (err: Error) => void): void {
  stdout.on('error', (err: Error) => {
    if (!isClosedPipe(err)) onError(err);
  });
}

/**
 * EPIPE itself, or the refusal of a stream that an EPIPE has already destroyed (an unawaited write's EPIPE destroys
 * stdout at once but emits its 'error' a tick later). Nothing else destroys stdout.
 */
function isClosedPipe(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}
