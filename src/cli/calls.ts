import { Command } from 'commander';
import { callPages } from '../store/call-pages.js';
import { compileHooks, releaseHeld } from '../intake.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { addColumns, BOM, csvColumns, csvHeader, csvRow } from './calls-csv.js';
import { commandConfig, positive, withStore } from './context.js';
import { writeOut } from './output.js';

const EXPORT_PAGE = 1000;

/**
 * `callhook calls list|show|export`: reads the store directly, without a running server. Output goes through
 * writeOut, so a reader that stops early (`| head`) stops the command too (contract section 7, output.ts).
 */
export function callsCommand(): Command {
  const calls = new Command('calls').description('read the stored calls');
  calls
    .command('list')
    .description('one line per call: id, received, hook, status, dedup key')
    .option('--hook <name>', 'only this hook')
    .option('--limit <n>', 'at most this many', '50')
    .option('--after <id>', 'calls after this id (cursor)')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { hook?: string; limit: string; after?: string; config?: string }) => {
      await withStore(commandConfig(opts.config), async (store) => {
        const calls = await store.listCalls({ hook: opts.hook, after: opts.after, limit: positive(opts.limit, '--limit') });
        await writeOut(calls.map(({ record: r, status, duplicates }) =>
          `${[r.id, r.received_at, r.hook, status, r.dedup_key, duplicates > 0 ? `+${duplicates} duplicates` : ''].join('\t').trimEnd()}\n`).join(''));
      });
    });
  calls
    .command('show')
    .description('one call with its raw request, as JSON')
    .argument('<id>')
    .option('-c, --config <file>', 'config file')
    .action(async (id: string, opts: { config?: string }) => {
      await withStore(commandConfig(opts.config), async (store) => {
        const call = await store.getCall(id);
        if (!call) throw new Error(`no call with id ${id}`);
        await writeOut(`${JSON.stringify(call, null, 2)}\n`);
      });
    });
  calls
    .command('export')
    .description('every call as JSON lines (the record shape) or CSV')
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .option('--hook <name>', 'only this hook')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { format: string; hook?: string; config?: string }) => {
      if (opts.format !== 'jsonl' && opts.format !== 'csv') throw new Error(`--format must be jsonl or csv, not ${opts.format}`);
      await withStore(commandConfig(opts.config), async (store) => {
        // A page at a time, each line written as stdout takes it: a store of millions exports in bounded memory.
        const pages = () => callPages(store, { hook: opts.hook }, EXPORT_PAGE);
        if (opts.format === 'jsonl') {
          for await (const page of pages()) await writeOut(page.map((c) => `${JSON.stringify(c.record)}\n`).join(''));
          return;
        }
        // CSV needs every column before the first row: one pass for the field names, one for the rows.
        const columns = csvColumns();
        for await (const page of pages()) for (const c of page) addColumns(columns, c.record);
        await writeOut(BOM + csvHeader(columns));
        for await (const page of pages()) await writeOut(page.map((c) => csvRow(c.record, columns)).join(''));
      });
    });
  calls
    .command('release')
    .description('release a held call to the sinks of its hook that want it; a running serve delivers it')
    .argument('<id>')
    .option('-c, --config <file>', 'config file')
    .action(async (id: string, opts: { config?: string }) => {
      const config = commandConfig(opts.config);
      const hooks = compileHooks(config, await resolveConfiguredSinks(config));
      await withStore(config, async (store) => {
        const call = await store.getCall(id);
        if (!call) throw new Error(`no call with id ${id}`);
        const sinks = await releaseHeld(store, hooks, call.record);
        if (!sinks) throw new Error(`call ${id} is not held`);
        console.log(`released ${id} to ${sinks.length > 0 ? sinks.join(', ') : 'no sink'}`);
      });
    });
  return calls;
}
