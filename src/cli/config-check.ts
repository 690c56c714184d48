import { Command } from 'commander';
import { channelEntry } from '../alerts/config.js';
import type { Config, FilledValue, SinkConfig } from '../config.js';
import { loadInCallHandlers } from '../in-call/handler.js';
import { compileHooks } from '../intake/pipeline.js';
import { describeRetention } from '../privacy/retention-config.js';
import { secretValues, valueAt } from '../secret-values.js';
import { maskSecrets } from '../secrets.js';
import { resolveConfiguredSinks, type SinkSpec } from '../sinks/registry.js';
import { adminToken, commandConfig, webhookKey } from './context.js';
import type { CommandIo } from './io.js';

export function configCommand(io: CommandIo): Command {
  return new Command('config').description('inspect the configuration').addCommand(
    new Command('check')
      .description('validate the config and print the resolved hooks and sinks, secrets masked')
      .option('-c, --config <file>', 'config file, YAML or JSON (also CALLHOOK_CONFIG)')
      .action(async (opts: { config?: string }) => {
        const config = commandConfig(io.env, opts.config);
        // The same checks serve makes before it opens anything: sink options, filters, modules, parameters.
        const specs = await resolveConfiguredSinks(config);
        compileHooks(config, specs);
        await loadInCallHandlers(config.hooks.values());
        for (const warning of config.warnings) io.stderr.write(`warning: ${warning}\n`);
        io.out.print(await describeConfig(config, specs));
      }),
  );
}

/**
 * The resolved configuration as JSON, every secret replaced by `***` (docs/reference.md#secrets). A sink option's value
 * that `${VAR}` filled in and that is not a secret shows as `${VAR}`: the variable is set, and its value is the
 * environment's to show.
 */
export async function describeConfig(config: Config, specs: readonly SinkSpec[]): Promise<string> {
  // Only to mask them and say they exist: a database out of reach does not fail the check of a config.
  const key = await webhookKey(config).catch(() => undefined);
  const token = await adminToken(config).catch(() => undefined);
  const secrets = [...secretValues(config, specs), ...(key ? [key] : []), ...(token ? [token] : [])];
  const shown = config.filled.filter((f) => !secrets.includes(f.value));
  const resolved = {
    config_file: config.configPath ?? null,
    listen: `${config.host}:${config.port}`,
    data_dir: config.dataDir,
    store: config.databaseUrl ? { type: 'postgres', url: config.databaseUrl } : { type: 'sqlite' },
    phone_region: config.phoneRegion,
    date_order: config.dateOrder,
    body_limit: config.bodyLimit,
    trust_proxy: config.trustProxy,
    metrics_token: config.metricsToken ?? '(none: /metrics is open)',
    api_keys: config.apiKeys.length > 0 ? config.apiKeys : key ? [`${key} (generated)`] : '(generated on first start)',
    admin_token: config.adminToken ?? (token ? `${token} (generated)` : '(generated on first start)'),
    hooks: Object.fromEntries(
      [...config.hooks].map(([name, hook]) => [
        name,
        { ...hook, keys: hook.keys.length > 0 ? hook.keys : '(the global keys)' },
      ]),
    ),
    sinks: withTestTraffic(withVariables(config.sinks, shown, ['sinks']) as SinkConfig[], specs),
    reconcile: config.reconcile
      ? {
          api_url: config.reconcile.apiUrl,
          api_key: config.reconcile.apiKey,
          hook: config.reconcile.hook,
          interval_ms: config.reconcile.intervalMs ?? '(only by callhook reconcile)',
          lookback_ms: config.reconcile.lookbackMs,
        }
      : null,
    public_url: config.publicUrl ?? null,
    alerts: {
      channels: withVariables(config.alerts.channels.map(channelEntry), shown, ['alerts', 'channels']),
      // docs/reference.md#alerts: read and checked, not yet evaluated.
      rules: Object.fromEntries(
        Object.entries(config.alerts.rules).map(([name, rule]) => [
          name,
          rule && 'active_hours' in rule ? { ...rule, active_hours: rule.active_hours.text } : rule,
        ]),
      ),
    },
    // docs/reference.md#retention: each duration as the grammar writes it, and what is kept how long in one line.
    retention: describeRetention(config.retention),
  };
  return JSON.stringify(maskSecrets(resolved, secrets), null, 2);
}

/**
 * Each sink with whether it takes test traffic (docs/reference.md#test-traffic), as resolved: the entry's
 * `test_traffic`, or its type's default.
 */
function withTestTraffic(sinks: readonly SinkConfig[], specs: readonly SinkSpec[]): SinkConfig[] {
  const taking = new Map(specs.map((spec) => [spec.name, spec.testTraffic]));
  return sinks.map((sink) => {
    const testTraffic = taking.get(sink.name);
    return testTraffic === undefined ? sink : { ...sink, test_traffic: testTraffic };
  });
}

/** A copy of the entries at `prefix` (the sinks, the channels) with each filled value written back as its `${VAR}`. */
function withVariables(entries: readonly object[], filled: readonly FilledValue[], prefix: readonly string[]): unknown {
  const copy = structuredClone(entries) as unknown as Record<string | number, unknown>;
  for (const { path, variable, value } of filled) {
    if (!prefix.every((key, i) => path[i] === key) || path.length < prefix.length + 2) continue;
    const parent = valueAt(copy, path.slice(prefix.length, -1)) as Record<string | number, unknown> | undefined;
    const last = path.at(-1)!;
    const text = parent?.[last];
    if (typeof text === 'string') parent![last] = text.replace(value, () => `\${${variable}}`);
  }
  return copy;
}
