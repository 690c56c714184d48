import { Command } from 'commander';
import { adminToken, commandConfig, webhookKey } from './context.js';
import { type CommandIo, ExitCode } from './io.js';
import { collectOption } from './platform-signer.js';
import { replay } from './replay.js';

export function replayCommand(io: CommandIo): Command {
  return new Command('replay')
    .description(
      'send fixture files as the calling service (or the voice platform of fixtures/<platform>/) would, and compare each reply with its expect',
    )
    .argument('<paths...>', 'fixture files or directories')
    .option('--url <url>', 'base URL of the receiver', 'http://localhost:8787')
    .option('--key <key>', 'webhook key (default: the configured or generated one)')
    .option('--admin-token <token>', 'admin token, to compare stored data (default: the configured or generated one)')
    .option('--hook <name>', 'send every fixture to this hook')
    .option(
      '--secret <secret>',
      "a voice platform's secret, to sign its fixtures with (default: the secret of the config's hook they name)",
    )
    .option(
      '--option <key=value>',
      "a platform hook's option, when the config does not have the hook",
      collectOption,
      [],
    )
    .option('-c, --config <file>', 'config file, to find the keys and the platform hooks')
    .action(
      async (
        paths: string[],
        opts: {
          url: string;
          key?: string;
          adminToken?: string;
          hook?: string;
          secret?: string;
          option: [string, string][];
          config?: string;
        },
      ) => {
        const config = commandConfig(io.env, opts.config);
        const results = await replay(paths, {
          url: opts.url,
          key: opts.key ?? (await webhookKey(config)),
          adminToken: opts.adminToken ?? (await adminToken(config)),
          hook: opts.hook,
          // docs/reference.md#other-voice-platforms: a platform's fixtures are signed with its hook's secret.
          hooks: config.hooks,
          secret: opts.secret,
          options: opts.option,
          print: io.out.print,
        });
        if (results.some((r) => !r.ok)) throw new ExitCode(1);
      },
    );
}
