import { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { API_KEYS_FILE, generateKey, readKeyFile, writeKeyFile } from '../keys/file.js';
import { commandConfig } from './context.js';

/** `callhook keys generate|show`: the webhook keys kept in the data dir when CALLHOOK_API_KEYS is not set. */
export function keysCommand(): Command {
  const keys = new Command('keys').description('manage webhook keys kept in the data dir');
  keys
    .command('generate')
    .description('add a new webhook key; old keys stay valid until --replace (rotation), restart serve to apply')
    .option('--replace', 'drop every other kept key')
    .option('-c, --config <file>', 'config file')
    .action((opts: { replace?: boolean; config?: string }) => {
      const config = commandConfig(opts.config);
      const path = join(config.dataDir, API_KEYS_FILE);
      const kept = !opts.replace && existsSync(path) ? readKeyFile(path) : [];
      const key = generateKey('chk');
      writeKeyFile(config.dataDir, API_KEYS_FILE, [key, ...kept]);
      console.log(key);
      if (config.apiKeys.length > 0) console.error('note: CALLHOOK_API_KEYS is set, so serve uses those keys, not this file');
    });
  keys
    .command('show')
    .description('print the webhook keys serve accepts')
    .option('-c, --config <file>', 'config file')
    .action((opts: { config?: string }) => {
      const config = commandConfig(opts.config);
      const path = join(config.dataDir, API_KEYS_FILE);
      const shown = config.apiKeys.length > 0 ? config.apiKeys : existsSync(path) ? readKeyFile(path) : [];
      if (shown.length === 0) throw new Error(`no webhook key yet: run callhook serve once, or callhook keys generate`);
      for (const key of shown) console.log(key);
    });
  return keys;
}
