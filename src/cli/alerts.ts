import { Command } from 'commander';
import type { DestinationStream } from 'pino';
import { sendTestMessages } from '../alerts/send-test.js';
import { createLogger } from '../log.js';
import { secretValues } from '../secret-values.js';
import { maskSecrets } from '../secrets.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { commandConfig } from './context.js';
import type { CommandIo } from './io.js';
import { ExitCode } from './io.js';

/**
 * `callhook alerts test [--channel NAME]` (docs/reference.md#alerts): the config loaded as `serve` loads it, one test
 * message sent through each channel (or the one named) from this process, and one line per channel on whether it went
 * and why not, secrets masked. Exit 1 when one did not go, 2 when the config cannot be read. No `serve` is needed and
 * nothing is stored.
 */
export function alertsCommand(io: CommandIo): Command {
  return new Command('alerts').description('alert channels').addCommand(
    new Command('test')
      .description('send a test message through each alert channel, or the one named, and say whether each went')
      .option('-c, --config <file>', 'config file, YAML or JSON (also CALLHOOK_CONFIG)')
      .option('--channel <name>', 'only this channel')
      .action(async (opts: { config?: string; channel?: string }) => {
        const config = commandConfig(io.env, opts.config);
        const all = config.alerts.channels;
        if (all.length === 0) throw new Error('no alert channels are configured (alerts.channels in the config)');
        const channels = opts.channel === undefined ? all : all.filter((c) => c.name === opts.channel);
        if (channels.length === 0)
          throw new Error(`no alert channel is named ${opts.channel} (channels: ${all.map((c) => c.name).join(', ')})`);
        // As serve would: a sink entry it would refuse is a config error here too.
        const specs = await resolveConfiguredSinks(config);
        const secrets = secretValues(config, specs);
        // The log channel's line goes to stderr, so that stdout is one line per channel.
        const log = createLogger({ level: config.logLevel, secrets, destination: io.stderr as DestinationStream });
        const outcomes = await sendTestMessages(channels, { log, publicUrl: config.publicUrl });
        for (const { name, type, error } of outcomes) {
          const line = error === undefined ? `${name} (${type}): sent` : `${name} (${type}): not sent: ${error}`;
          io.out.print(maskSecrets(line, secrets) as string);
        }
        if (outcomes.some((o) => o.error !== undefined)) throw new ExitCode(1);
      }),
  );
}
