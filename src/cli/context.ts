import { type Config, loadConfig } from '../config.js';
import { ADMIN_TOKEN_FILE, API_KEYS_FILE } from '../keys/file.js';
import { type KeptKeys, type KeyName, keptKeys } from '../keys/kept.js';
import { secretValues } from '../secret-values.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import type { CliIo } from './io.js';

/** What most commands start from: the config as `serve` would load it from `env`, with the keys it would use. */
export function commandConfig(env: CliIo['env'], configPath?: string): Config {
  return loadConfig(env, configPath ?? env.CALLHOOK_CONFIG);
}

/**
 * The webhook key `serve` accepts: configured, else the newest one callhook keeps, in the data dir or, with
 * DATABASE_URL, in the database, where every replica reads it (docs/reference.md#start-and-set-up).
 */
export async function webhookKey(config: Config): Promise<string | undefined> {
  return config.apiKeys[0] ?? (await withKeptKeys(config, API_KEYS_FILE, (kept) => kept.read()))?.[0];
}

/** The admin token `serve` accepts, found as the webhook key is. */
export async function adminToken(config: Config): Promise<string | undefined> {
  return config.adminToken ?? (await withKeptKeys(config, ADMIN_TOKEN_FILE, (kept) => kept.read()))?.[0];
}

/**
 * Where callhook keeps the keys named `name` for this config. With DATABASE_URL a reader gets a lone connection
 * and runs no migration (reading a key never changes the schema under running replicas); a writer opens the store,
 * which makes the tables when no serve has yet.
 */
export async function withKeptKeys<T>(
  config: Config,
  name: KeyName,
  work: (kept: KeptKeys) => Promise<T>,
  { write = false } = {},
): Promise<T> {
  const { dataDir, databaseUrl } = config;
  if (!databaseUrl) return work(keptKeys(name, { dataDir }));
  if (!write) {
    // Loaded only when asked for, so a SQLite deployment never loads the PostgreSQL driver (as store/open.ts).
    const { withPostgresKeptKeys } = await import('../store/postgres/kept-keys.js');
    return withPostgresKeptKeys(databaseUrl, (store) => work(keptKeys(name, { dataDir, store })));
  }
  const store = await openStore(config);
  try {
    return await work(keptKeys(name, { dataDir, store: store.keptKeys }));
  } finally {
    await store.close();
  }
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

/**
 * The line a long command redraws on a terminal's stderr as it goes (docs/reference.md#command-line); none off a
 * terminal.
 */
export function progressLine(stderr: CliIo['stderr']): { show(text: string): void; clear(): void } | undefined {
  if (!stderr.isTTY) return undefined;
  return {
    show: (text) => void stderr.write(`\r\x1b[K${text}`),
    clear: () => void stderr.write('\r\x1b[K'),
  };
}

/**
 * Every secret `serve` would mask for this config (docs/reference.md#secrets): the config's own, with the options its
 * sink types declare, and the keys and admin token callhook keeps. For the commands that print what the store holds (a
 * raw body is the sender's and may carry anything), as the admin API masks it.
 */
export async function configSecrets(config: Config): Promise<string[]> {
  const specs = await resolveConfiguredSinks(config).catch(() => []);
  const kept = await Promise.all(
    ([API_KEYS_FILE, ADMIN_TOKEN_FILE] as const).map((name) =>
      withKeptKeys(config, name, (k) => k.read()).catch(() => undefined),
    ),
  );
  return [...secretValues(config, specs), ...kept.flatMap((keys) => keys ?? [])];
}
