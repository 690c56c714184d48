import { Command } from 'commander';
import { runServer } from '../main.js';

export function serveCommand(): Command {
  return new Command('serve')
    .description('run the receiver (the default of npm start)')
    .option('-c, --config <file>', 'config file, YAML or JSON (also CALLHOOK_CONFIG)')
    .action(async (opts: { config?: string }) => {
      await runServer({ env: process.env, configPath: opts.config ?? process.env.CALLHOOK_CONFIG });
    });
}
