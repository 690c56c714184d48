import { Command, Option } from 'commander';
import type { IncidentPage, IncidentView } from '../admin/incidents.js';
import { RULE_NAMES } from '../alerts/config.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig, positive } from './context.js';
import type { CommandIo } from './io.js';
import { zonedIso } from './zoned-time.js';

/**
 * `callhook incidents list|ack` (docs/reference.md#alerts) ask the running serve through its admin API
 * (admin-client.ts), as the dashboard's incidents page asks the same operations: an acknowledgement is kept with who
 * made it, which is the serve's to say (http/actor.ts), not the command's.
 */
export function incidentsCommand(io: CommandIo): Command {
  const incidents = new Command('incidents').description("list and acknowledge the running serve's alert incidents");
  withAdminOptions(
    incidents
      .command('list')
      .description('a table of incidents, newest first: id, rule, key, opened, state, acknowledged by, counts'),
  )
    .option('--open', 'only open incidents')
    .addOption(new Option('--rule <rule>', 'only this rule').choices(RULE_NAMES))
    .option('--limit <n>', 'at most this many', '50')
    .option('--after <id>', 'incidents older than this one (cursor)')
    .option('--json', "the admin API's reply as it is")
    .action(async (opts: ListOptions) => {
      const config = commandConfig(io.env, opts.config);
      const query = new URLSearchParams({ limit: String(positive(opts.limit, '--limit')) });
      if (opts.open) query.set('state', 'open');
      if (opts.rule !== undefined) query.set('rule', opts.rule);
      if (opts.after !== undefined) query.set('after', opts.after);
      const admin = await adminClient(config, opts);
      const page = (await admin('GET', `/incidents?${query}`)) as IncidentPage;
      if (opts.json) return io.out.write(`${JSON.stringify(page, null, 2)}\n`);
      if (page.incidents.length === 0) return io.out.write(`no ${opts.open ? 'open ' : ''}incidents\n`);
      const opened = zonedIso(config.timezone);
      const more = page.next === null ? '' : `more: --after ${page.next}\n`;
      await io.out.write(table([HEADER, ...page.incidents.map((i) => incidentRow(i, opened))]) + more);
    });
  withAdminOptions(
    incidents
      .command('ack')
      .description('acknowledge an open incident: it stays open, and who acknowledged it and when are kept'),
  )
    .argument('<id>', 'the incident (incidents list)')
    .action(async (id: string, opts: AdminOptions) => {
      const config = commandConfig(io.env, opts.config);
      const admin = await adminClient(config, opts);
      const incident = (await admin('POST', `/incidents/${encodeURIComponent(id)}/ack`)) as IncidentView;
      // The first acknowledgement is the one kept: a second says whose it was.
      const at = zonedIso(config.timezone)(incident.acknowledged_at!);
      await io.out.write(`${incident.id} ${about(incident)}: acknowledged by ${incident.acknowledged_by} at ${at}\n`);
    });
  return incidents;
}

const HEADER = ['ID', 'RULE', 'KEY', 'OPENED', 'STATE', 'ACKNOWLEDGED BY', 'COUNTS'];

/** One incident's row of the table; `-` where it has no value, so every row has each column. */
export function incidentRow(incident: IncidentView, opened: (at: string) => string): string[] {
  const counts = Object.entries(incident.counts).map(([name, n]) => `${name}=${n}`);
  return [
    incident.id,
    incident.rule,
    incident.key ?? '-',
    opened(incident.opened_at),
    incident.state,
    incident.acknowledged_by ?? '-',
    counts.length > 0 ? counts.join(' ') : '-',
  ].map((text) => text.replace(/\s+/g, ' '));
}

/** Columns padded to their widest cell, two spaces apart; the last one as it is. */
export function table(rows: readonly string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

/** `dead_delivery (crm)`, or the rule alone when it has no key. */
function about({ rule, key }: IncidentView): string {
  return key === null ? rule : `${rule} (${key})`;
}

type AdminOptions = AdminClientOptions & { config?: string };
type ListOptions = AdminOptions & { open?: boolean; rule?: string; limit: string; after?: string; json?: boolean };
