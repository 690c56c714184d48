import { Command } from 'commander';
import { adminToken, commandConfig, webhookKey } from './context.js';
import { type CommandIo, ExitCode } from './io.js';
import { replay } from './replay.js';

export function replayCommand(io: CommandIo): Command {
  return new Command('replay')
    .description('send fixture files as the calling service would, and compare each reply with its expect')
    .argument('<paths...>', 'fixture files or directories')
    .option('--url <url>', 'base URL of the receiver', 'http://localhost:8787')
    .option('--key <key>', 'webhook key (default: the configured or generated one)')
    .option('--admin-token <token>', 'admin token, to compare stored data (default: the configured or generated one)')
    .option('--hook <name>', 'send every fixture to this hook')
    .option('-c, --config <file>', 'config file, to find the keys')
    .action(
      async (
        paths: string[],
        opts: { url: string; key?: string; adminToken?: string; hook?: string; config?: string },
      ) => {
        const config = commandConfig(io.env, opts.config);
        const results = await replay(paths, {
          url: opts.url,
          key: opts.key ?? (await webhookKey(config)),
          adminToken: opts.adminToken ?? (await adminToken(config)),
          hook: opts.hook,
          print: io.out.print,
        });
        if (results.some((r) => !r.ok)) throw new ExitCode(1);
      },
    );
}
