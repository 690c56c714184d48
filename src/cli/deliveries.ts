import { Command, Option } from 'commander';
import { listDeliveries, retryDeliveries } from '../admin/deliveries.js';
import type { DeliveryState } from '../store/outbox.js';
import { commandConfig, positive, withStore } from './context.js';
import type { CommandIo } from './io.js';

const STATES: DeliveryState[] = ['pending', 'in_flight', 'done', 'dead'];

/**
 * `callhook deliveries list|retry`: the outbox, read and retried on the store the config names, through the same
 * operations as the admin API and the dashboard (admin/deliveries.ts). A retry wakes no worker here: a running
 * serve finds the deliveries due within a second.
 */
export function deliveriesCommand(io: CommandIo): Command {
  const deliveries = new Command('deliveries').description('inspect and retry deliveries');
  deliveries
    .command('list')
    .description('one line per delivery: id, call, sink, state, attempts, next attempt, last error')
    .addOption(new Option('--state <state>', 'only this state').choices(STATES))
    .option('--sink <name>', 'only this sink')
    .option('--call <id>', 'only this call')
    .option('--limit <n>', 'at most this many', '100')
    .option('--after <id>', 'deliveries after this id (cursor)')
    .option('-c, --config <file>', 'config file')
    .action(
      async (opts: {
        state?: DeliveryState;
        sink?: string;
        call?: string;
        limit: string;
        after?: string;
        config?: string;
      }) => {
        await withStore(commandConfig(io.env, opts.config), async (store) => {
          const { deliveries: rows } = await listDeliveries(
            { store },
            {
              state: opts.state,
              sink: opts.sink,
              callId: opts.call,
              limit: positive(opts.limit, '--limit'),
              after: opts.after === undefined ? undefined : positive(opts.after, '--after'),
            },
          );
          for (const d of rows) {
            const next = d.state === 'pending' ? new Date(d.nextAttemptAt).toISOString() : '';
            io.out.print([d.id, d.callId, d.sink, d.state, d.attempts, next, d.lastError ?? ''].join('\t').trimEnd());
          }
        });
      },
    );
  deliveries
    .command('retry')
    .description(
      'make deliveries due now with a fresh attempt count: dead ones by default; a running serve picks them up',
    )
    .addOption(new Option('--state <state>', 'which to retry').choices(['dead', 'pending']).default('dead'))
    .option('--sink <name>', 'only this sink')
    .option('--call <id>', 'only this call')
    .option('--id <ids...>', 'only these delivery ids')
    .option('-c, --config <file>', 'config file')
    .action(
      async (opts: { state: 'dead' | 'pending'; sink?: string; call?: string; id?: string[]; config?: string }) => {
        await withStore(commandConfig(io.env, opts.config), async (store) => {
          const ids = opts.id?.map((id) => positive(id, '--id'));
          const { retried } = await retryDeliveries(
            { store, notify: () => {} },
            { state: opts.state, sink: opts.sink, callId: opts.call, ids },
          );
          io.out.print(`retried ${retried} ${retried === 1 ? 'delivery' : 'deliveries'}`);
        });
      },
    );
  return deliveries;
}
