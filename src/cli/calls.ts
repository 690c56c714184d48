import { once } from 'node:events';
import { Command } from 'commander';
import type { CallRecord } from '../record.js';
import { callPages } from '../store/call-pages.js';
import { compileHooks, releaseHeld } from '../intake.js';
import { resolveConfiguredSinks } from '../sinks/registry.js';
import { commandConfig, positive, withStore } from './context.js';

const EXPORT_PAGE = 1000;

/** `callhook calls list|show|export`: reads the store directly, without a running server. */
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
        for (const call of await store.listCalls({ hook: opts.hook, after: opts.after, limit: positive(opts.limit, '--limit') })) {
          const r = call.record;
          console.log([r.id, r.received_at, r.hook, call.status, r.dedup_key, call.duplicates > 0 ? `+${call.duplicates} duplicates` : ''].join('\t').trimEnd());
        }
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
        console.log(JSON.stringify(call, null, 2));
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
          for await (const page of pages()) await write(page.map((c) => `${JSON.stringify(c.record)}\n`).join(''));
          return;
        }
        // CSV needs every column before the first row: one pass for the field names, one for the rows.
        const fields = new Set<string>();
        for await (const page of pages()) for (const c of page) for (const name of Object.keys(c.record.data)) fields.add(name);
        const columns = [...fields];
        await write(csvLine(csvHeader(columns)));
        for await (const page of pages()) await write(page.map((c) => csvLine(csvRow(c.record, columns))).join(''));
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

/** Writes to stdout, waiting while a slow reader of the pipe has not taken what was written before. */
async function write(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

/** RFC 4180 CSV: the record's own fields, then one column per data field seen in any record. */
const csvHeader = (fields: readonly string[]) => ['id', 'hook', 'dedup_key', 'received_at', 'source', ...fields, 'problems'];

const csvRow = (r: CallRecord, fields: readonly string[]) =>
  [r.id, r.hook, r.dedup_key, r.received_at, r.source, ...fields.map((f) => r.data[f]), r.problems.map((p) => `${p.field}:${p.code}`).join(' ')];

function csvLine(values: readonly unknown[]): string {
  const cell = (v: unknown) => {
    const s = v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
    return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return `${values.map(cell).join(',')}\r\n`;
}
