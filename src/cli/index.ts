#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { CallhookError } from '../errors.js';
import { callsCommand } from './calls.js';
import { configCommand } from './config-check.js';
import { deliveriesCommand } from './deliveries.js';
import { keysCommand } from './keys.js';
import { maskedForCli } from './masked.js';
import { OutputClosed, watchStdout } from './output.js';
import { purgeCommand } from './purge.js';
import { receiptsCommand } from './receipts.js';
import { reconcileCommand } from './reconcile.js';
import { replayCommand } from './replay-command.js';
import { serveCommand } from './serve.js';
import { simulateCommand } from './simulate.js';
import { sinksCommand } from './sinks.js';

/** The `callhook` command: one file per command in this folder; every failure is one clear line and exit 2. */

const program = new Command('callhook')
  .description('Receive AI voice-call webhooks durably, deduplicated, and deliver them to your systems')
  .exitOverride();

for (const command of [
  serveCommand(),
  replayCommand(),
  configCommand(),
  keysCommand(),
  callsCommand(),
  receiptsCommand(),
  deliveriesCommand(),
  sinksCommand(),
  purgeCommand(),
  reconcileCommand(),
  simulateCommand(),
])
  program.addCommand(command);

// Once, for every command: a reader that goes away early (`callhook calls list | head`) ends the command quietly
// with exit 0, so a script under `set -o pipefail` sees no failure (contract section 7), never with a stack trace
// or an EPIPE line (output.ts).
watchStdout();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof OutputClosed) process.exit(0);
  if (err instanceof CommanderError) process.exit(err.exitCode);
  // An operation's refusal (admin/) is worded for an HTTP reply, "Not found: no call with id x": the CLI says what follows.
  const message =
    err instanceof CallhookError ? (err.detail ?? err.message) : err instanceof Error ? err.message : String(err);
  process.stderr.write(`callhook: ${await maskedForCli(message, process.argv, process.env)}\n`);
  process.exit(2);
}
