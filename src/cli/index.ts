#!/usr/bin/env node
import { processIo } from './io.js';
import { watchStdout } from './output.js';
import { runCli } from './program.js';

/** `callhook` as a process: the program (program.ts) run on the process's own io, and its exit code. */

// Once, for the process: a reader that goes away early (`callhook calls list | head`) ends the command quietly with
// exit 0, so a script under `set -o pipefail` sees no failure (docs/reference.md#command-line), never with a stack
// trace or an EPIPE line (output.ts). Any other error writing stdout is one line and exit 2.
watchStdout(process.stdout, (err) => {
  process.stderr.write(`callhook: cannot write to standard output: ${err.message}\n`);
  process.exit(2);
});

const code = await runCli(process.argv, processIo());
// Done with 0, the process ends when its event loop does: `serve` has only started the receiver, which runs until a
// signal (main.ts, runServer). Any other code ends it at once, whatever a failed command left open.
if (code !== 0) process.exit(code);
