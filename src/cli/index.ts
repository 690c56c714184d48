#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { callsCommand } from './calls.js';
import { configCommand } from './config-check.js';
import { keysCommand } from './keys.js';
import { replayCommand } from './replay-command.js';
import { serveCommand } from './serve.js';

/** The `callhook` command: one file per command in this folder; every failure is one clear line and exit 2. */

const program = new Command('callhook')
  .description('Receive AI voice-call webhooks durably, deduplicated, and deliver them to your systems')
  .showHelpAfterError()
  .exitOverride();

for (const command of [serveCommand(), replayCommand(), configCommand(), keysCommand(), callsCommand()]) program.addCommand(command);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const message = err instanceof ConfigError || !(err instanceof Error) ? String(err instanceof Error ? err.message : err) : err.message;
  process.stderr.write(`callhook: ${message}\n`);
  process.exit(2);
}
