import type { Output } from './output.js';

/**
 * What a command takes from the process it runs in, handed to it instead of read from `process`: the program runs
 * in its own process (index.ts, the only file that knows the process) and in a test's, where each run gets fresh
 * streams and an env of its own (program.ts).
 */
export interface CliIo {
  /** The variables the config is read from, as `serve` reads them (config.ts). */
  env: Record<string, string | undefined>;
  /** `receipts ingest --body -` reads it; `purge` asks on it when it is a terminal. */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Failures, notes, and on a terminal a question or a progress line. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

/** What each command is given: the io, and this run's standard output, which knows when its reader has gone. */
export interface CommandIo extends CliIo {
  out: Output;
}

/** The process's own streams and environment, for index.ts. */
export function processIo(): CliIo {
  return { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
}

/**
 * Ends a command that has said what it had to with a code other than 0 (replay and simulate: 1 when a reply did
 * not match or a call was lost; purge: 1 when the answer on a terminal was no). Thrown, so a command's `finally`
 * (withStore) still closes what it opened; runCli returns the code without printing anything.
 */
export class ExitCode extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.name = 'ExitCode';
    this.code = code;
  }
}
