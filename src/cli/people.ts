import { Command } from 'commander';
import type { ErasureCheck, ErasureReply, PersonDocument } from '../privacy/requests.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig } from './context.js';
import type { CommandIo } from './io.js';
import { zonedIso } from './zoned-time.js';

/**
 * `callhook people show` and `callhook erase` (docs/reference.md#access, #erasure) ask the running serve through its
 * admin API (admin-client.ts): an erasure reaches the sinks' copies (the jsonl file serve appends to, the postgres and
 * redis-stream sinks' rows and entries), which only the process that holds them can erase while it writes.
 */

/** A person is found by a scan of the whole store, and erased downstream too: minutes on a large one. */
const SCAN_MS = 15 * 60_000;

type PersonOptions = AdminClientOptions & { config?: string; phone?: string; email?: string };

/** The person as a query or a body: what was given, exactly; serve reads and checks it. */
function personOf({ phone, email }: PersonOptions): Record<string, string> {
  return { ...(phone === undefined ? {} : { phone }), ...(email === undefined ? {} : { email }) };
}

const withPerson = (command: Command) =>
  withAdminOptions(command)
    .option('--phone <number>', 'their phone number, written any way (read as intake reads it)')
    .option('--email <address>', 'their e-mail address');

export function peopleCommand(io: CommandIo): Command {
  const people = new Command('people').description('what callhook keeps about one person (an access request)');
  withPerson(
    people
      .command('show')
      .description(
        'everything kept about the person, as one JSON document: calls, raw requests, edits, receipts, deliveries',
      ),
  ).action(async (opts: PersonOptions) => {
    const admin = await adminClient(commandConfig(io.env, opts.config), opts);
    const document = (await admin(
      'GET',
      `/people?${new URLSearchParams(personOf(opts))}`,
      undefined,
      SCAN_MS,
    )) as PersonDocument;
    if (document.nothing_kept) io.stderr.write('nothing is kept about this person\n');
    await io.out.write(`${JSON.stringify(document, null, 2)}\n`);
  });
  return people;
}

export function eraseCommand(io: CommandIo): Command {
  return withPerson(
    new Command('erase').description(
      'erase everything kept about one person, of every hook, and their copies in the sinks that can erase',
    ),
  )
    .option('--dry-run', 'count what would be erased, and erase nothing')
    .option('--check', 'say whether, and when, the person was erased; erase nothing')
    .option('--json', "the admin API's reply as it is")
    .action(async (opts: PersonOptions & { dryRun?: boolean; check?: boolean; json?: boolean }) => {
      const config = commandConfig(io.env, opts.config);
      const admin = await adminClient(config, opts);
      if (opts.check) {
        const check = (await admin('GET', `/erasures?${new URLSearchParams(personOf(opts))}`)) as ErasureCheck;
        if (opts.json) return io.out.write(`${JSON.stringify(check, null, 2)}\n`);
        if (!check.erased) return io.out.write('no erasure of this person is recorded\n');
        const at = zonedIso(config.timezone);
        for (const { at: when, actor, counts } of check.erasures)
          await io.out.write(`erased at ${at(when)} by ${actor}: ${countsText(counts)}\n`);
        return;
      }
      const reply = (await admin('POST', '/erase', {
        ...personOf(opts),
        dry_run: Boolean(opts.dryRun),
      })) as ErasureReply;
      if (opts.json) return io.out.write(`${JSON.stringify(reply, null, 2)}\n`);
      await io.out.write(erasureText(reply));
    });
}

/** What an erasure did, for a person to read: the counts, then each sink, and what to erase by hand. */
export function erasureText(reply: ErasureReply): string {
  if (reply.nothing_kept) return 'nothing is kept about this person: nothing erased\n';
  const verb = reply.dry_run ? 'would erase' : 'erased';
  const lines = [`${verb}: ${countsText(reply.erased)}`];
  for (const sink of reply.sinks) {
    const records = `${sink.record_ids.length} record${sink.record_ids.length === 1 ? '' : 's'}`;
    if (sink.error !== undefined)
      lines.push(
        `sink ${sink.sink} (${sink.type}): could not erase its ${records}: ${sink.error}; erase them there by hand or run again: ${sink.record_ids.join(' ')}`,
      );
    else if (sink.erased === null)
      lines.push(
        `sink ${sink.sink} (${sink.type}) cannot erase: it received ${records}; erase them there by hand: ${sink.record_ids.join(' ')}`,
      );
    else
      lines.push(
        `sink ${sink.sink} (${sink.type}): ${reply.dry_run ? `would erase its copies of ${records}` : `erased ${sink.erased} of ${records}`}`,
      );
  }
  if (reply.dry_run) lines.push('dry run: nothing was erased');
  return `${lines.join('\n')}\n`;
}

/** The counts by kind in one order, whatever order the store kept them in (PostgreSQL's jsonb sorts its keys). */
const KINDS = ['calls', 'receipts', 'edits', 'deliveries', 'attempts'] as const;

function countsText(counts: object): string {
  const of = counts as Record<string, unknown>;
  return KINDS.filter((kind) => typeof of[kind] === 'number')
    .map((kind) => `${kind} ${of[kind]}`)
    .join(', ');
}
