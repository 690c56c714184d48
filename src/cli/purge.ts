import { Command } from 'commander';
import { ageMs, commandConfig, progressLine, withStore } from './context.js';

/** `callhook purge --older-than 90d`: deletes old calls and receipts, never one still owed to a sink. */
export function purgeCommand(): Command {
  return new Command('purge')
    .description('delete calls and receipts older than an age; calls with deliveries still pending are kept')
    .requiredOption('--older-than <age>', 'age such as 90d, 12h, 2w')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { olderThan: string; config?: string }) => {
      const age = ageMs(opts.olderThan);
      if (age === undefined) throw new Error(`--older-than takes a number and a unit m, h, d or w (like 90d), not "${opts.olderThan}"`);
      const before = new Date(Date.now() - age);
      await withStore(commandConfig(opts.config), async (store) => {
        // A purge of months takes a while on SQLite, which deletes a chunk at a time: a terminal sees it move.
        const line = progressLine();
        let purged: { calls: number; receipts: number };
        try {
          purged = await store.purge(before, line && (({ calls, receipts }) => line.show(`purge: ${calls} calls, ${receipts} receipts deleted`)));
        } finally {
          line?.clear();
        }
        const { calls, receipts } = purged;
        console.log(`purged ${calls} calls and ${receipts} receipts received before ${before.toISOString()}`);
      });
    });
}
