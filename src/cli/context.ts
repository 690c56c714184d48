import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, loadConfig } from '../config.js';
import { ADMIN_TOKEN_FILE, API_KEYS_FILE, readKeyFile } from '../keys/file.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/** What most commands start from: the config as `serve` would load it, with the keys it would use. */
export function commandConfig(configPath?: string): Config {
  return loadConfig(process.env, configPath ?? process.env.CALLHOOK_CONFIG);
}

/** The webhook key `serve` accepts: configured, else the one generated into the data dir. */
export function webhookKey(config: Config): string | undefined {
  return config.apiKeys[0] ?? readIfExists(join(config.dataDir, API_KEYS_FILE));
}

export function adminToken(config: Config): string | undefined {
  return config.adminToken ?? readIfExists(join(config.dataDir, ADMIN_TOKEN_FILE));
}

function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readKeyFile(path)[0] : undefined;
}

/** Opens the store the config names for one command, and closes it whatever happens. */
export async function withStore(config: Config, work: (store: Store) => Promise<void>): Promise<void> {
  const store = await openStore(config);
  try {
    await work(store);
  } finally {
    await store.close();
  }
}

export function positive(text: string, option: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${option} must be a positive whole number, not ${text}`);
  return n;
}

/** The line a long command redraws on a terminal's stderr as it goes (contract section 7); none off a terminal. */
export function progressLine(): { show(text: string): void; clear(): void } | undefined {
  if (!process.stderr.isTTY) return undefined;
  return {
    show: (text) => void process.stderr.write(`\r\x1b[K${text}`),
    clear: () => void process.stderr.write('\r\x1b[K'),
  };
}
