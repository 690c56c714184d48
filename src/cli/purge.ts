import { Command } from 'commander';
import { commandConfig, withStore } from './context.js';

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** `90d`, `12h`, `30m`, `2w` → milliseconds. */
export function parseAge(text: string): number {
  const match = /^(\d+)([mhdw])$/.exec(text.trim());
  if (!match) throw new Error(`--older-than takes a number and a unit m, h, d or w (like 90d), not "${text}"`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

/** `callhook purge --older-than 90d`: deletes old calls and receipts, never one still owed to a sink. */
export function purgeCommand(): Command {
  return new Command('purge')
    .description('delete calls and receipts older than an age; calls with deliveries still pending are kept')
    .requiredOption('--older-than <age>', 'age such as 90d, 12h, 2w')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { olderThan: string; config?: string }) => {
      const before = new Date(Date.now() - parseAge(opts.olderThan));
      await withStore(commandConfig(opts.config), async (store) => {
        const { calls, receipts } = await store.purge(before);
        console.log(`purged ${calls} calls and ${receipts} receipts received before ${before.toISOString()}`);
      });
    });
}
