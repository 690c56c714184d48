import { Command } from 'commander';
import type { Config } from '../config.js';
import { maskSecrets } from '../secrets.js';
import { loadInCallHandlers } from '../in-call/handler.js';
import { compileHooks } from '../intake.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { adminToken, commandConfig, webhookKey } from './context.js';

export function configCommand(): Command {
  return new Command('config').description('inspect the configuration').addCommand(
    new Command('check')
      .description('validate the config and print the resolved hooks and sinks, secrets masked')
      .option('-c, --config <file>', 'config file, YAML or JSON (also CALLHOOK_CONFIG)')
      .action(async (opts: { config?: string }) => {
        const config = commandConfig(opts.config);
        // The same checks serve makes before it opens anything: sink options, filters, modules, parameters.
        compileHooks(config, await resolveConfiguredSinks(config));
        await loadInCallHandlers(config.hooks.values());
        for (const warning of config.warnings) console.error(`warning: ${warning}`);
        console.log(await describeConfig(config));
      }),
  );
}

/** The resolved configuration as JSON, every secret replaced by `***`. */
export async function describeConfig(config: Config): Promise<string> {
  // Only to mask them and say they exist: a database out of reach does not fail the check of a config.
  const key = await webhookKey(config).catch(() => undefined);
  const token = await adminToken(config).catch(() => undefined);
  const secrets = [...config.secrets, ...(key ? [key] : []), ...(token ? [token] : [])];
  const resolved = {
    config_file: config.configPath ?? null,
    listen: `${config.host}:${config.port}`,
    data_dir: config.dataDir,
    store: config.databaseUrl ? { type: 'postgres', url: config.databaseUrl } : { type: 'sqlite' },
    phone_region: config.phoneRegion,
    date_order: config.dateOrder,
    body_limit: config.bodyLimit,
    api_keys: config.apiKeys.length > 0 ? config.apiKeys : key ? [`${key} (generated)`] : '(generated on first start)',
    admin_token: config.adminToken ?? (token ? `${token} (generated)` : '(generated on first start)'),
    hooks: Object.fromEntries([...config.hooks].map(([name, hook]) => [name, { ...hook, keys: hook.keys.length > 0 ? hook.keys : '(the global keys)' }])),
    sinks: config.sinks,
    reconcile: config.reconcile
      ? { api_url: config.reconcile.apiUrl, api_key: config.reconcile.apiKey, hook: config.reconcile.hook, interval_ms: config.reconcile.intervalMs ?? '(only by callhook reconcile)', lookback_ms: config.reconcile.lookbackMs }
      : null,
  };
  return JSON.stringify(maskSecrets(resolved, secrets), null, 2);
}
