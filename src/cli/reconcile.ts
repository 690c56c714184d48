import { Command } from 'commander';
import type { CountryCode } from 'libphonenumber-js';
import { recordLostCalls } from '../alerts/lost-calls.js';
import { createClient } from '../client/index.js';
import { readDuration } from '../duration.js';
import { compileHooks, createIntake } from '../intake/pipeline.js';
import { toCalendarDate } from '../normalize/formats.js';
import { describeServiceError } from '../reconcile/describe-error.js';
import { keptRun, maskedRunError } from '../reconcile/kept-run.js';
import { type ReconcileSummary, reconcile } from '../reconcile/reconcile.js';
import { secretValues, urlSecrets } from '../secret-values.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { commandConfig, progressLine, withStore } from './context.js';
import type { CommandIo } from './io.js';

interface Options {
  apiUrl?: string;
  apiKey?: string;
  since?: string;
  dryRun?: boolean;
  hook?: string;
  json?: boolean;
  config?: string;
}

/**
 * `callhook reconcile`: asks the calling service for its campaigns' calls (spec endpoints 8 and 9) and stores
 * those whose webhook never arrived. It writes to the store directly; a running `serve` delivers what it adds.
 */
export function reconcileCommand(io: CommandIo): Command {
  return new Command('reconcile')
    .description('store the calls the calling service lists in its campaigns whose webhook never arrived')
    .option(
      '--api-url <url>',
      'base URL of the calling service, ending in /api/v1 (default: reconcile.api_url of the config)',
    )
    .option('--api-key <key>', 'API key of the account (default: reconcile.api_key of the config)')
    .option('--since <date>', 'only campaigns started on or after this date (YYYY-MM-DD), or within this age (7d, 12h)')
    .option('--dry-run', 'list the calls it would add, and store nothing')
    .option(
      '--hook <name>',
      'the end-of-call hook the calls are stored under (default: reconcile.hook, else end-of-call)',
    )
    .option('--json', 'print the summary as one JSON object')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: Options) => {
      const config = commandConfig(io.env, opts.config);
      const apiUrl = opts.apiUrl ?? config.reconcile?.apiUrl;
      const apiKey = opts.apiKey ?? config.reconcile?.apiKey;
      if (!apiUrl) throw new Error('--api-url is required (or reconcile.api_url in the config file)');
      if (!apiKey) throw new Error('--api-key is required (or reconcile.api_key in the config file)');
      const since = opts.since === undefined ? undefined : parseSince(opts.since, new Date());
      const client = createClient({ baseUrl: apiUrl, apiKey });
      const hookName = opts.hook ?? config.reconcile?.hook ?? 'end-of-call';
      const specs = await resolveConfiguredSinks(config);
      const hook = compileHooks(config, specs).get(hookName);
      if (!hook)
        throw new Error(`--hook: no hook is named "${hookName}" (hooks: ${[...config.hooks.keys()].join(', ')})`);
      if (hook.config.kind === 'in-call')
        throw new Error(`--hook: "${hookName}" is an in-call hook, which stores nothing`);

      await withStore(config, async (store) => {
        const line = progressLine(io.stderr);
        // Kept for the dashboard's overview, a dry run too, marked as such (docs/reference.md#dashboard).
        const secrets = [
          ...secretValues(config, specs),
          ...(apiKey.length >= 4 ? [apiKey] : []),
          ...urlSecrets(apiUrl),
        ];
        const keeping = {
          store,
          trigger: 'cli',
          since,
          dryRun: Boolean(opts.dryRun),
          secrets,
          onKeepError: (err: unknown) =>
            io.stderr.write(
              `reconcile: the run could not be kept for the dashboard: ${maskedRunError(err instanceof Error ? err.message : String(err), secrets)}\n`,
            ),
        } as const;
        let summary: ReconcileSummary;
        try {
          summary = await keptRun(keeping, async (into) => {
            try {
              return await reconcile({
                client,
                store,
                hook,
                since,
                dryRun: opts.dryRun,
                summary: into,
                ingest: createIntake({ store }),
                region: config.phoneRegion as CountryCode,
                onProgress:
                  line &&
                  ((done, total, name) =>
                    line.show(`reconcile: campaign ${Math.min(done + 1, total)}/${total} ${name}`)),
              });
            } catch (err) {
              throw new Error(describeServiceError(err, apiUrl), { cause: err });
            }
          });
        } finally {
          line?.clear();
        }
        // The running serve's sender sends it (docs/reference.md#alerts: lost_calls, a notice).
        const { channels, rules } = config.alerts;
        if (!opts.dryRun && summary.recovered.length > 0 && channels.length > 0 && rules.lost_calls !== false)
          await recordLostCalls(
            store,
            channels.map((c) => c.name),
            summary.recovered.length,
          ).catch((err: unknown) =>
            io.stderr.write(`reconcile: the lost_calls alert could not be kept: ${(err as Error).message}\n`),
          );
        if (opts.json) io.out.print(JSON.stringify({ dry_run: Boolean(opts.dryRun), ...summary }));
        else printSummary(summary, Boolean(opts.dryRun), io.out.print);
      });
    });
}

/** A date as written, or an age back from now: both give the first day of campaigns to read. */
export function parseSince(text: string, now: Date): string {
  const trimmed = text.trim();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(trimmed) ? toCalendarDate(trimmed) : undefined;
  if (date) return date;
  // An age reads as every other duration does (docs/reference.md#durations): `7d`, `36h`, `1w3d`.
  const age = readDuration(trimmed);
  if ('error' in age) throw new Error(`--since takes a date (2026-11-01) or an age (7d, 12h, 2w), not "${text}"`);
  return new Date(now.getTime() - age.ms).toISOString().slice(0, 10);
}

function printSummary(summary: ReconcileSummary, dryRun: boolean, print: (line: string) => void): void {
  for (const call of summary.recovered) {
    const who = [call.campaign, call.name || '(no name)', call.phone ?? '(no phone)', call.recordingUrl ?? '']
      .join('\t')
      .trimEnd();
    print(dryRun ? `would add\t${who}` : `added\t${call.id}\t${call.status}\t${who}`);
  }
  for (const { campaign, reason } of summary.skipped) print(`skipped campaign\t${campaign}\t${reason}`);
  const held = summary.recovered.filter((c) => c.status === 'held').length;
  print(
    `${summary.campaigns} campaigns, ${summary.entries} audience entries, ${summary.calls} placed calls: ` +
      `${summary.matched} already stored, ${summary.recovered.length} ${dryRun ? 'would be added' : 'added'}${held ? ` (${held} held)` : ''}`,
  );
}
