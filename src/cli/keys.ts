import { Command } from 'commander';
import { API_KEYS_FILE, generateKey } from '../keys/file.js';
import { commandConfig, withKeptKeys } from './context.js';
import type { CommandIo } from './io.js';

/**
 * `callhook keys generate|show`: the webhook keys callhook keeps when CALLHOOK_API_KEYS is not set, in the data
 * dir or, with DATABASE_URL, in the database (docs/reference.md#start-and-set-up and docs/reference.md#command-line).
 */
export function keysCommand(io: CommandIo): Command {
  const keys = new Command('keys').description(
    'manage the webhook keys callhook keeps (data dir, or the database with DATABASE_URL)',
  );
  keys
    .command('generate')
    .description(
      'add a new webhook key; a running serve accepts it within 2 s, and old keys stay valid until --replace (rotation)',
    )
    .option('--replace', 'drop every other kept key')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { replace?: boolean; config?: string }) => {
      const config = commandConfig(io.env, opts.config);
      const key = generateKey('chk');
      const where = await withKeptKeys(
        config,
        API_KEYS_FILE,
        async (kept) => {
          await kept.add(key, opts.replace === true);
          return kept.where;
        },
        { write: true },
      );
      // The key alone on stdout, so `KEY=$(callhook keys generate)` works; what to know about it on stderr.
      io.out.print(key);
      const dropped = opts.replace
        ? ', and stops accepting the keys it replaced'
        : '; the keys kept before stay accepted';
      io.stderr.write(
        `note: kept in ${where}. A running callhook serve that keeps its keys there accepts it within 2 s, without a restart${dropped}.\n`,
      );
      io.stderr.write(`note: a serve started with CALLHOOK_API_KEYS does not read ${where}.\n`);
      if (config.apiKeys.length > 0)
        io.stderr.write(
          'note: CALLHOOK_API_KEYS (or api_keys in the config) is set here: a serve started like this accepts those keys, not this one.\n',
        );
    });
  keys
    .command('show')
    .description('print the webhook keys serve accepts')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { config?: string }) => {
      const config = commandConfig(io.env, opts.config);
      const shown =
        config.apiKeys.length > 0
          ? config.apiKeys
          : ((await withKeptKeys(config, API_KEYS_FILE, (kept) => kept.read())) ?? []);
      if (shown.length === 0) throw new Error(`no webhook key yet: run callhook serve once, or callhook keys generate`);
      for (const key of shown) io.out.print(key);
    });
  return keys;
}
