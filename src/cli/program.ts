import { Command, CommanderError, type OutputConfiguration } from 'commander';
import { CallhookError } from '../errors.js';
import { alertsCommand } from './alerts.js';
import { auditCommand } from './audit.js';
import { backupCommand } from './backup.js';
import { callsCommand } from './calls.js';
import { configCommand } from './config-check.js';
import { deliveriesCommand } from './deliveries.js';
import { incidentsCommand } from './incidents.js';
import type { CliIo, CommandIo } from './io.js';
import { ExitCode } from './io.js';
import { keysCommand } from './keys.js';
import { maskedForCli } from './masked.js';
import { createOutput, OutputClosed } from './output.js';
import { eraseCommand, peopleCommand } from './people.js';
import { purgeCommand } from './purge.js';
import { receiptsCommand } from './receipts.js';
import { reconcileCommand } from './reconcile.js';
import { replayCommand } from './replay-command.js';
import { serveCommand } from './serve.js';
import { simulateCommand } from './simulate.js';
import { sinksCommand } from './sinks.js';
import { usersCommand } from './users.js';

/**
 * The `callhook` program: one file per command in this folder, each given the io it runs with. Nothing here touches
 * the process: index.ts runs it on the process's io and exits with its code; a test runs it on streams of its own.
 */
export function createProgram(io: CliIo): Command {
  const run: CommandIo = { ...io, out: createOutput(io.stdout) };
  const program = new Command('callhook').description(
    'Receive AI voice-call webhooks durably, deduplicated, and deliver them to your systems',
  );
  for (const command of [
    serveCommand(run),
    replayCommand(run),
    configCommand(run),
    keysCommand(run),
    callsCommand(run),
    receiptsCommand(run),
    deliveriesCommand(run),
    sinksCommand(run),
    purgeCommand(run),
    backupCommand(run),
    reconcileCommand(run),
    simulateCommand(run),
    alertsCommand(run),
    incidentsCommand(run),
    peopleCommand(run),
    eraseCommand(run),
    usersCommand(run),
    auditCommand(run),
  ])
    program.addCommand(command);
  // Each command has its own settings (addCommand copies none): every one's help and usage errors go to io, and
  // none exits the process; it throws, and runCli gives its code.
  const output = outputTo(io);
  for (const command of everyCommand(program)) command.exitOverride().configureOutput(output);
  return program;
}

/**
 * Runs `callhook` on `argv` (as process.argv: node, the script, then the arguments) and gives the exit code: 0 when
 * done, or when stdout's reader went away early (output.ts); commander's own for help and usage errors; a
 * command's own (ExitCode); else 2, with the failure in one line on stderr, secrets masked.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await createProgram(io).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof OutputClosed) return 0;
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof ExitCode) return err.code;
    // An operation's refusal (admin/) is worded for an HTTP reply, "Not found: no call with id x": the CLI says what
    // follows.
    const message =
      err instanceof CallhookError ? (err.detail ?? err.message) : err instanceof Error ? err.message : String(err);
    io.stderr.write(`callhook: ${await maskedForCli(message, argv, io.env)}\n`);
    return 2;
  }
}

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

function outputTo({ stdout, stderr }: CliIo): OutputConfiguration {
  return {
    writeOut: (text) => void stdout.write(text),
    writeErr: (text) => void stderr.write(text),
    // As commander's defaults, from io's streams: a terminal's width, else commander's 80.
    getOutHelpWidth: () => (stdout.isTTY && stdout.columns) || 80,
    getErrHelpWidth: () => (stderr.isTTY && stderr.columns) || 80,
    // callhook's help has no colour to keep, so none to strip either way.
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  };
}
