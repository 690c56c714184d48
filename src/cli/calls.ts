import { Command, Option } from 'commander';
import { listCalls, showCall } from '../admin/calls.js';
import { receiptJson } from '../admin/receipts.js';
import { PLATFORM_NAMES } from '../platforms/platform.js';
import { RECORD_SOURCES, type RecordSource } from '../record.js';
import { maskBytes, maskSecrets } from '../secrets.js';
import { NO_PLATFORM } from '../store/admin-query.js';
import { callPages } from '../store/call-pages.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { callLine } from './call-line.js';
import { addColumns, BOM, csvColumns, csvHeader, csvRow } from './calls-csv.js';
import { commandConfig, configSecrets, positive, withStore } from './context.js';
import type { CommandIo } from './io.js';
import { type PeriodOptions, redeliverPeriod } from './redeliver-period.js';
import { dayRange, zonedIso } from './zoned-time.js';

const EXPORT_PAGE = 1000;

/**
 * `callhook calls list|show|export` read the store directly, without a running server, list and show through the
 * same operations as the admin API and the dashboard (admin/calls.ts); `release`, `redeliver` and
 * `edit` change calls through the running serve's admin API (admin-client.ts). Output goes through
 * `io.out.write`, so a reader that stops early (`| head`) stops the command too (docs/reference.md#command-line,
 * output.ts).
 */
export function callsCommand(io: CommandIo): Command {
  const calls = new Command('calls').description('read the stored calls');
  calls
    .command('list')
    .description(
      'one line per call, newest first: id, received, hook, status, name, number, outcome, dedup key, duplicates',
    )
    .option('--hook <name>', 'only this hook')
    .addOption(new Option('--status <status>', 'only held or accepted calls').choices(['accepted', 'held']))
    .option(
      '--source <sources>',
      `only calls from these sources (${RECORD_SOURCES.join(', ')}; comma-separated or repeated)`,
      collectSources,
      [],
    )
    .addOption(
      new Option(
        '--platform <name>',
        `only calls a voice platform sent; ${NO_PLATFORM}: the calling service's`,
      ).choices([NO_PLATFORM, ...PLATFORM_NAMES]),
    )
    .option('--from <day>', 'received on this day or later, YYYY-MM-DD in the configured timezone')
    .option('--to <day>', 'received on this day or earlier, YYYY-MM-DD in the configured timezone')
    .option('--phone <number>', "only this caller's calls, the number written any way (read as intake reads it)")
    .option('--test-calls', 'list test traffic too (source replay or simulate), left out unless --source names it')
    .option('--review', 'the review queue: held calls, and calls with problems not marked reviewed')
    .addOption(
      new Option('--order <order>', 'desc: newest first; asc: oldest first').choices(['asc', 'desc']).default('desc'),
    )
    .option('--limit <n>', 'at most this many', '50')
    .option('--after <id>', 'calls after this id, in the order asked for (cursor)')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: ListOptions) => {
      const config = commandConfig(io.env, opts.config);
      const { hook, status, platform, phone, order, after, review } = opts;
      const limit = positive(opts.limit, '--limit');
      // Days in the config's timezone, as the admin API and the dashboard read them (docs/reference.md#time-zone).
      const { from, to } = dayRange(config.timezone, opts);
      // The store's source filter, as the admin API's `source` (an array when several are asked for).
      const source = opts.source.length === 0 ? undefined : opts.source.length === 1 ? opts.source[0] : opts.source;
      const secrets = await configSecrets(config);
      const received = zonedIso(config.timezone);
      await withStore(config, async (store) => {
        // The phone is read as intake reads it, in the config's region, as the admin API reads it.
        const { calls } = await listCalls(
          { store, phoneRegion: config.phoneRegion },
          { hook, status, source, platform, phone, review, testCalls: opts.testCalls, order, after, from, to, limit },
        );
        // Names and outcomes are what the caller said: masked as `calls show` masks them, should a secret be there.
        const lines = calls.map((call) => maskSecrets(callLine(call, received), secrets) as string[]);
        await io.out.write(lines.map((fields) => `${fields.join('\t')}\n`).join(''));
      });
    });
  calls
    .command('show')
    .description('one call with its raw request, receipts, deliveries, attempts and edits, as JSON')
    .argument('<id>')
    .option('-c, --config <file>', 'config file')
    .action(async (id: string, opts: { config?: string }) => {
      const config = commandConfig(io.env, opts.config);
      const secrets = await configSecrets(config);
      await withStore(config, async (store) => {
        // As GET /admin/calls/<id> shows it (docs/reference.md#refused-requests and docs/reference.md#dashboard), a
        // receipt's body as text or base64, and masked as the admin API masks it.
        const call = await showCall({ store }, id);
        const shown = maskSecrets(
          { ...call, receipts: call.receipts.map((r) => receiptJson(r, (bytes) => maskBytes(bytes, secrets))) },
          secrets,
        );
        await io.out.write(`${JSON.stringify(shown, null, 2)}\n`);
      });
    });
  calls
    .command('export')
    .description('every call as JSON lines (the record shape) or CSV')
    .option('--format <format>', 'jsonl or csv', 'jsonl')
    .option('--hook <name>', 'only this hook')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { format: string; hook?: string; config?: string }) => {
      if (opts.format !== 'jsonl' && opts.format !== 'csv')
        throw new Error(`--format must be jsonl or csv, not ${opts.format}`);
      const config = commandConfig(io.env, opts.config);
      await withStore(config, async (store) => {
        // A page at a time, each line written as stdout takes it: a store of millions exports in bounded memory.
        const pages = () => callPages(store, { hook: opts.hook }, EXPORT_PAGE);
        if (opts.format === 'jsonl') {
          for await (const page of pages())
            await io.out.write(page.map((c) => `${JSON.stringify(c.record)}\n`).join(''));
          return;
        }
        // CSV needs every column before the first row: one pass for the field names, one for the rows. A call
        // committed between the passes has no columns of its own yet: the rows stop at the last call the first
        // pass saw (ids sort by arrival).
        const columns = csvColumns();
        const received = zonedIso(config.timezone);
        let last = '';
        for await (const page of pages()) {
          for (const c of page) addColumns(columns, c.record);
          last = page.at(-1)?.record.id ?? last;
        }
        await io.out.write(BOM + csvHeader(columns));
        for await (const page of pages()) {
          const seen = page.filter((c) => c.record.id <= last);
          await io.out.write(seen.map((c) => csvRow(c.record, columns, received)).join(''));
          if (seen.length < page.length) break;
        }
      });
    });
  // Changes go through the running serve (docs/reference.md#operating): its config decides the sinks.
  withAdminOptions(
    calls
      .command('release')
      .description('release a held call through the running serve, to the sinks of its hook that want it'),
  )
    .argument('<id>')
    .action(async (id: string, opts: AdminOptions) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const { sinks } = (await admin('POST', `/calls/${encodeURIComponent(id)}/release`)) as { sinks: string[] };
      await io.out.write(`released ${id} to ${sinks.length > 0 ? sinks.join(', ') : 'no sink'}\n`);
    });
  withAdminOptions(
    calls
      .command('redeliver')
      .description(
        'deliver a call again through the running serve: to every sink of its hook that wants it, or to the ones named; with --from, the calls of a period to one sink, in the background, with progress',
      ),
  )
    .argument('[id]', 'the call (not with --from)')
    .option('--sink <name...>', 'only these sinks (with --from: the one sink)')
    .option('--from <date>', "the calls of a period, from this day (in serve's timezone) or ISO time")
    .option('--to <date>', 'with --from: to this day, included (default: now)')
    .option('--dry-run', 'with --from: say how many calls would be sent, and send nothing')
    .action(async (id: string | undefined, opts: PeriodOptions) => {
      // docs/reference.md#a-period-to-one-sink: the period form is its own file; the one-call form stays as it was.
      if (opts.from !== undefined || opts.to !== undefined || opts.dryRun) return redeliverPeriod(io, id, opts);
      if (id === undefined) throw new Error('give a call id, or --sink NAME --from DATE to send the calls of a period');
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const reply = (await admin(
        'POST',
        `/calls/${encodeURIComponent(id)}/redeliver`,
        opts.sink ? { sinks: opts.sink } : {},
      )) as { sinks: string[]; scheduled: number };
      const pending = reply.sinks.length - reply.scheduled;
      const note = pending > 0 ? ` (${pending} already pending or in flight)` : '';
      await io.out.write(
        `redelivering ${id} to ${reply.scheduled} of ${reply.sinks.length} ${reply.sinks.length === 1 ? 'sink' : 'sinks'}${note}: ${reply.sinks.join(', ') || 'none'}\n`,
      );
    });
  // docs/reference.md#dashboard: the running serve normalises the new values with its hook's parameters, as at intake.
  withAdminOptions(
    calls
      .command('edit')
      .description('change fields of a call through the running serve, normalised as at intake; never redelivers'),
  )
    .argument('<id>')
    .option(
      '--set <field=value>',
      'a declared field and its new value (field= empties it); repeat for more',
      collectSet,
      {},
    )
    .action(async (id: string, opts: AdminOptions & { set: Record<string, string> }) => {
      if (Object.keys(opts.set).length === 0) throw new Error('name a field to change: --set field=value');
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const reply = (await admin('PATCH', `/calls/${encodeURIComponent(id)}`, { data: opts.set })) as EditReply;
      await io.out.write(describeEdit(id, reply));
    });
  return calls;
}

interface EditReply {
  record: { revision: number };
  problems: { field: string; code: string }[];
  edit: { fields: Record<string, { before?: unknown; after?: unknown }> } | null;
}

/** `--source a,b`, `--source a --source b`: each name checked, in the order given, once each. */
function collectSources(text: string, sources: RecordSource[]): RecordSource[] {
  const named = text.split(',').map((name) => name.trim());
  const unknown = named.find((name) => !(RECORD_SOURCES as readonly string[]).includes(name));
  if (unknown !== undefined)
    throw new Error(`--source ${JSON.stringify(unknown)} is not a source: one of ${RECORD_SOURCES.join(', ')}`);
  return [...new Set([...sources, ...(named as RecordSource[])])];
}

/** `--set field=value`, repeatable: the value is everything after the first `=`, given as text to be normalised. */
function collectSet(text: string, set: Record<string, string>): Record<string, string> {
  const at = text.indexOf('=');
  if (at < 1) throw new Error(`--set takes field=value, not ${JSON.stringify(text)}`);
  return Object.defineProperty(set, text.slice(0, at), {
    value: text.slice(at + 1),
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/**
 * What changed, field by field (before → after, "(none)" where there was no value), the new revision and the problems
 * left.
 */
export function describeEdit(id: string, { record, problems, edit }: EditReply): string {
  const shown = (change: { before?: unknown; after?: unknown }, side: 'before' | 'after') =>
    Object.hasOwn(change, side) ? JSON.stringify(change[side]) : '(none)';
  const left = `problems: ${problems.length === 0 ? 'none' : problems.map((p) => `${p.field} ${p.code}`).join(', ')}\n`;
  if (!edit) return `nothing changed in ${id} (revision ${record.revision})\n${left}`;
  const lines = Object.entries(edit.fields).map(
    ([field, change]) => `  ${field}: ${shown(change, 'before')} -> ${shown(change, 'after')}\n`,
  );
  return `edited ${id}: revision ${record.revision}\n${lines.join('')}${left}`;
}

interface ListOptions {
  hook?: string;
  status?: 'accepted' | 'held';
  source: RecordSource[];
  platform?: string;
  from?: string;
  to?: string;
  phone?: string;
  review?: boolean;
  testCalls?: boolean;
  order: 'asc' | 'desc';
  limit: string;
  after?: string;
  config?: string;
}

type AdminOptions = AdminClientOptions & { config?: string };
