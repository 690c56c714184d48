import { Command } from 'commander';
import type { AuditEntryView, AuditPage } from '../admin/audit-log.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig, positive } from './context.js';
import { table } from './incidents.js';
import type { CommandIo } from './io.js';
import { zonedIso } from './zoned-time.js';

/**
 * `callhook audit list` (docs/reference.md#audit-log) reads the running serve's audit log through its admin API: newest
 * first, filtered as `GET /admin/audit` filters, a page at a time. Admins only, as the route.
 */

type ListOptions = AdminClientOptions & {
  config?: string;
  actor?: string;
  action?: string;
  target?: string;
  from?: string;
  to?: string;
  limit: string;
  before?: string;
  json?: boolean;
};

export function auditCommand(io: CommandIo): Command {
  const audit = new Command('audit').description('who changed what, when, from where, and how it ended');
  withAdminOptions(
    audit
      .command('list')
      .description('the audit log, newest first: time, actor, address, action, target, outcome, details'),
  )
    .option('--actor <actor>', "only this actor: a user's address, admin-token, cli")
    .option('--action <action>', 'only this action: call.edit, sink.pause, user.add, sign-in, forbidden …')
    .option('--target <target>', "only what touched this: a call's id, a sink's name, a user's address …")
    .option('--from <date>', 'from this day (in the timezone) or ISO time')
    .option('--to <date>', 'up to this day (included) or ISO time (excluded)')
    .option('--limit <n>', 'at most this many', '50')
    .option('--before <id>', 'entries older than this one (cursor)')
    .option('--json', "the admin API's reply as it is")
    .action(async (opts: ListOptions) => {
      const config = commandConfig(io.env, opts.config);
      const query = new URLSearchParams({ limit: String(positive(opts.limit, '--limit')) });
      for (const name of ['actor', 'action', 'target', 'from', 'to', 'before'] as const)
        if (opts[name] !== undefined) query.set(name, opts[name]);
      const admin = await adminClient(config, opts);
      const page = (await admin('GET', `/audit?${query}`)) as AuditPage;
      if (opts.json) return io.out.write(`${JSON.stringify(page, null, 2)}\n`);
      if (page.entries.length === 0) return io.out.write('no entries\n');
      const at = zonedIso(config.timezone);
      const more = page.next === null ? '' : `more: --before ${page.next}\n`;
      await io.out.write(table([HEADER, ...page.entries.map((e) => auditRow(e, at))]) + more);
    });
  return audit;
}

const HEADER = ['AT', 'ACTOR', 'ADDRESS', 'ACTION', 'TARGET', 'OUTCOME', 'DETAILS'];

/** One entry's row; `-` where it has no value, so every row has each column. */
export function auditRow(entry: AuditEntryView, at: (iso: string) => string): string[] {
  return [
    at(entry.at),
    entry.actor,
    entry.address ?? '-',
    entry.action,
    entry.target ?? '-',
    entry.outcome,
    entry.details === null ? '-' : JSON.stringify(entry.details),
  ].map((text) => text.replace(/\s+/g, ' '));
}
