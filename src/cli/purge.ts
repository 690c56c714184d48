import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import { deletingDurationOption } from '../duration.js';
import { RECORD_SOURCES } from '../record.js';
import { type PurgeCounts, TEST_SOURCES, type TestSource } from '../store/maintenance.js';
import { commandConfig, progressLine, withStore } from './context.js';
import { type CliIo, type CommandIo, ExitCode } from './io.js';

interface Options {
  olderThan?: string;
  source: string[];
  dryRun?: boolean;
  yes?: boolean;
  includeRefused?: boolean;
  config?: string;
}

/**
 * `callhook purge --older-than 90d | --source replay,simulate [--dry-run] [--yes] [--include-refused]`
 * (docs/reference.md#command-line): deletes old calls and receipts, never a held call, one still owed to a sink, nor a
 * refused request not yet ingested; or test traffic, whatever its age unless `--older-than` is given too
 * (Maintenance.purge). On a terminal it shows the counts and asks first. Off a terminal it deletes without asking, as
 * it always has: cron jobs and scripts run it so today, and a `--yes` they lack would stop their purges unnoticed.
 */
export function purgeCommand(io: CommandIo): Command {
  return new Command('purge')
    .description(
      'delete calls and receipts older than an age (never a held call, one still owed to a sink, nor a refused request not yet ingested), or test traffic',
    )
    .option('--older-than <age>', 'age with its unit, such as 90d, 12h, 2w or 1h30m')
    .option(
      '--source <sources>',
      'test traffic of these sources (replay, simulate; comma-separated or repeated), whatever its age',
      collectSources,
      [],
    )
    .option('--dry-run', 'print what it would delete, and delete nothing')
    .option('-y, --yes', 'delete without asking on a terminal (off a terminal it never asks)')
    .option('--include-refused', 'also delete the receipts of refused requests not yet ingested (their only copy)')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: Options) => {
      const sources = testSources(opts);
      // docs/reference.md#durations: a bare number is refused here, before the store is opened. `90` read as
      // milliseconds purged every call there was, off a terminal (cron) without a question.
      const before =
        opts.olderThan === undefined
          ? null
          : new Date(Date.now() - deletingDurationOption(opts.olderThan, '--older-than'));
      const options = sources ? { sources } : { includeRefused: Boolean(opts.includeRefused) };
      const which = [
        sources && `of source ${sources.join(', ')}`,
        before && `received before ${before.toISOString()}`,
      ].filter(Boolean);
      const what = (counts: PurgeCounts) =>
        [`${counts.calls} calls and ${counts.receipts} receipts`, ...which].join(' ');
      await withStore(commandConfig(io.env, opts.config), async (store) => {
        if (opts.dryRun) {
          io.out.print(`would purge ${what(await store.purgeable(before, options))}`);
          return;
        }
        if (!opts.yes && onTerminal(io)) {
          const counts = await store.purgeable(before, options);
          if (counts.calls + counts.receipts > 0 && !(await confirm(io, `callhook: delete ${what(counts)}? [y/N] `))) {
            io.stderr.write('callhook: nothing deleted\n');
            throw new ExitCode(1);
          }
        }
        // A purge of months takes a while on SQLite, which deletes a chunk at a time: a terminal sees it move.
        const line = progressLine(io.stderr);
        let purged: PurgeCounts;
        try {
          purged = await store.purge(before, {
            ...options,
            onProgress:
              line && (({ calls, receipts }) => line.show(`purge: ${calls} calls, ${receipts} receipts deleted`)),
          });
        } finally {
          line?.clear();
        }
        // docs/reference.md#audit-log: the purge is kept with the counts; run here on the store, it is the CLI's.
        await store.appendAudit([
          {
            at: new Date().toISOString(),
            actor: 'cli',
            address: null,
            action: 'purge',
            target: null,
            outcome: 'ok',
            details: {
              calls: purged.calls,
              receipts: purged.receipts,
              ...(before ? { before: before.toISOString() } : {}),
              ...(sources ? { sources } : {}),
            },
          },
        ]);
        io.out.print(`purged ${what(purged)}`);
      });
    });
}

/** `--source replay,simulate`, `--source replay --source simulate`: every name given, in order. */
function collectSources(text: string, sources: string[]): string[] {
  return [...sources, ...text.split(',').map((name) => name.trim())];
}

/**
 * The test sources asked for, or undefined for a purge by age; refused in one line: nothing to purge named, a real
 * source (real calls go by age alone, and never while owed), a name that is no source, `--include-refused` by source.
 */
function testSources({ olderThan, source, includeRefused }: Options): TestSource[] | undefined {
  if (source.length === 0) {
    if (olderThan === undefined)
      throw new Error('name what to purge: --older-than AGE (such as 90d), --source replay,simulate, or both');
    return undefined;
  }
  for (const name of source) {
    if ((TEST_SOURCES as readonly string[]).includes(name)) continue;
    if ((RECORD_SOURCES as readonly string[]).includes(name))
      throw new Error(
        `--source ${name}: purge takes only test traffic (replay, simulate); real calls go by age, with --older-than`,
      );
    throw new Error(`--source ${JSON.stringify(name)} is not a source: purge takes replay and simulate`);
  }
  if (includeRefused)
    throw new Error('--include-refused goes with --older-than alone: a refused request has no source');
  return [...new Set(source as TestSource[])];
}

/** Someone is there to answer: the question goes to stderr, so stdout stays the command's output alone. */
const onTerminal = ({ stdin, stderr }: CliIo) => Boolean(stdin.isTTY && stderr.isTTY);

/** y or yes, any case, deletes; anything else, an empty line or the end of input (Ctrl-D) does not. */
async function confirm({ stdin, stderr }: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({ input: stdin, output: stderr });
  try {
    rl.setPrompt(question);
    rl.prompt();
    const answer = await Promise.race([
      once(rl, 'line').then(([text]) => String(text)),
      once(rl, 'close').then(() => ''),
    ]);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
