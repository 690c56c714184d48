import { Command } from 'commander';
import { runServer } from '../main.js';
import type { CommandIo } from './io.js';

export function serveCommand(io: CommandIo): Command {
  return new Command('serve')
    .description('run the receiver (the default of npm start)')
    .option('-c, --config <file>', 'config file, YAML or JSON (also CALLHOOK_CONFIG)')
    .action(async (opts: { config?: string }) => {
      await runServer({ env: io.env, configPath: opts.config ?? io.env.CALLHOOK_CONFIG });
    });
}
