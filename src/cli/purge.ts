import { Command } from 'commander';
import { durationOption } from '../duration.js';
import { commandConfig, progressLine, withStore } from './context.js';

/** `callhook purge --older-than 90d`: deletes old calls and receipts, never one still owed to a sink. */
export function purgeCommand(): Command {
  return new Command('purge')
    .description('delete calls and receipts older than an age; calls with deliveries still pending are kept')
    .requiredOption('--older-than <age>', 'age such as 90d, 12h, 2w or 1h30m')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { olderThan: string; config?: string }) => {
      const age = olderThan(opts.olderThan);
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

/**
 * The one duration grammar (contract section 7), with a unit required: by the grammar a bare number is
 * milliseconds, and `--older-than 90` meant as days would delete every delivered call up to a moment ago.
 */
function olderThan(text: string): number {
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) throw new Error(`--older-than needs a unit: "${text}" would be milliseconds (write 90d, 12h, 2w or 1h30m)`);
  return durationOption(text, '--older-than');
}
