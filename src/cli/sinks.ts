import { Command } from 'commander';
import type { SinkView } from '../admin/sinks.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig } from './context.js';
import type { CommandIo } from './io.js';

/**
 * `callhook sinks list|pause|resume` (docs/reference.md#command-line and docs/reference.md#what-every-sink-shares) ask
 * the running serve through its admin API (admin-client.ts): which sinks there are, their types and their configured
 * `paused` are its config's, and a pause it keeps in the store holds for every replica and every restart. No serve
 * answering is one line and a non-zero exit.
 */
export function sinksCommand(io: CommandIo): Command {
  const sinks = new Command('sinks').description('list, pause and resume the sinks of the running serve');
  withAdminOptions(
    sinks
      .command('list')
      .description(
        'one line per sink (or the one named): name, type, state, deliveries by state, oldest pending age, last success, last error',
      ),
  )
    .argument('[name]', 'only this sink')
    .option('--json', "the admin API's reply as it is")
    .action(async (name: string | undefined, opts: AdminOptions & { json?: boolean }) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const reply = (await admin('GET', '/sinks')) as { sinks: SinkView[] };
      const shown = name === undefined ? reply.sinks : reply.sinks.filter((s) => s.name === name);
      if (shown.length === 0)
        throw new Error(`no sink is named ${name} (sinks: ${reply.sinks.map((s) => s.name).join(', ')})`);
      await io.out.write(
        opts.json ? `${JSON.stringify({ sinks: shown }, null, 2)}\n` : shown.map((s) => `${sinkLine(s)}\n`).join(''),
      );
    });
  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    const description = paused
      ? 'pause a sink for every replica, kept across restarts: its deliveries stay pending and spend no attempt'
      : 'resume a paused sink: its pending deliveries are due now';
    withAdminOptions(sinks.command(action).description(description))
      .argument('<name>')
      .action(async (name: string, opts: AdminOptions) => {
        const admin = await adminClient(commandConfig(io.env, opts.config), opts);
        const sink = (await admin('POST', `/sinks/${encodeURIComponent(name)}/${action}`)) as SinkView;
        const inFlight =
          paused && sink.deliveries.in_flight > 0 ? ` (${sink.deliveries.in_flight} in flight finish first)` : '';
        await io.out.write(
          `${paused ? 'paused' : 'resumed'} ${sink.name}: ${sink.deliveries.pending} pending${inFlight}\n`,
        );
      });
  }
  return sinks;
}

/** Tab-separated, as the other lists are, with the counts named so a reader need not count columns. */
export function sinkLine(s: SinkView): string {
  const state = s.paused
    ? `paused (${s.paused_by})`
    : s.rate_limited_until
      ? `rate-limited until ${s.rate_limited_until}`
      : s.failing
        ? 'failing'
        : 'running';
  const counts = (['pending', 'in_flight', 'done', 'dead'] as const).map((k) => `${k}=${s.deliveries[k]}`).join(' ');
  return [
    s.name,
    s.type,
    state,
    counts,
    `oldest_pending=${s.oldest_pending_age_seconds}s`,
    `last_success=${s.last_success_at ?? '-'}`,
    // A failure older than the last success is history (docs/reference.md#what-every-sink-shares): named so.
    s.last_error === null
      ? ''
      : `${s.failing ? 'last_error' : 'last_error_before_success'}=${s.last_error.replaceAll(/\s+/g, ' ')}`,
  ]
    .join('\t')
    .trimEnd();
}

type AdminOptions = AdminClientOptions & { config?: string };
