/**
 * Standard output of a CLI command, and what happens when its reader goes away (contract section 7: every command
 * exits quietly when its output is closed early, `callhook calls list | head`).
 *
 * Node ignores SIGPIPE, so a write to a pipe whose reader has exited fails with EPIPE, and the stream emits an
 * 'error' that nobody listens to: a stack trace, or `callhook: write EPIPE` and exit 2 from the command's catch.
 * index.ts calls `watchStdout()` once; from then on an EPIPE marks the output closed, `writeOut` throws
 * `OutputClosed` so a long writer stops at its next page instead of reading the whole store into nowhere, and the
 * command's own `finally` (withStore) still closes the store before index.ts exits 0.
 */

/** Thrown by `writeOut` once stdout's reader has gone; index.ts exits quietly on it. */
export class OutputClosed extends Error {
  constructor() {
    super('standard output was closed');
    this.name = 'OutputClosed';
  }
}

let closed = false;

/** Whether stdout's reader has gone: a command that prints with console.log may stop early on it. */
export const outputClosed = (): boolean => closed;

/**
 * Listens for stdout's errors, once for the process: EPIPE closes the output quietly; any other (a full disk under
 * `> file`) is one line and exit 2, as every other failure of a command.
 */
export function watchStdout(stdout: NodeJS.WriteStream = process.stdout): void {
  stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (isClosedPipe(err)) {
      closed = true;
      return;
    }
    process.stderr.write(`callhook: cannot write to standard output: ${err.message}\n`);
    process.exit(2);
  });
}

/**
 * Writes to stdout and resolves once the text has been handed on, so a slow reader of the pipe holds the writer
 * back a page at a time and memory stays bounded. Throws OutputClosed once the reader has gone.
 */
export async function writeOut(text: string, stdout: NodeJS.WritableStream = process.stdout): Promise<void> {
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

/**
 * EPIPE itself, or the refusal of a stream that an EPIPE has already destroyed (a console.log's EPIPE destroys
 * stdout at once but emits its 'error' a tick later). Nothing else destroys stdout.
 */
function isClosedPipe(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED';
}
