import { setTimeout as sleep } from 'node:timers/promises';
import type { RedeliveryJob } from '../admin/period-redelivery.js';
import { type AdminClientOptions, AdminReplyError, adminClient } from './admin-client.js';
import { commandConfig, progressLine } from './context.js';
import type { CommandIo } from './io.js';

/**
 * `callhook calls redeliver --sink NAME --from DATE [--to DATE] [--dry-run]` (docs/reference.md#a-period-to-one-sink): the
 * calls of a period sent to one sink, through the running serve, whose config says which calls the sink takes. Serve
 * answers at once with a job that does it in the background (admin/period-redelivery.ts); this polls the job, shows
 * how far it is on a terminal, and prints one summary line at the end. The job goes on in serve if this is stopped
 * (Ctrl-C); it is lost if serve restarts, and this says so.
 */

export interface PeriodOptions extends AdminClientOptions {
  config?: string;
  sink?: string[];
  from?: string;
  to?: string;
  dryRun?: boolean;
}

/** How long between two looks at the job: soon at first, then at a pace that costs serve nothing. */
const POLL_MS = [100, 250, 500, 1_000];

export async function redeliverPeriod(io: CommandIo, id: string | undefined, opts: PeriodOptions): Promise<void> {
  if (id !== undefined) throw new Error(`give a call id or --from, not both (${id})`);
  if (opts.from === undefined) throw new Error('--from DATE: the first day of the period to send');
  if (opts.sink?.length !== 1) throw new Error('--sink NAME: the one sink to send the period to');
  const sink = opts.sink[0]!;
  const admin = await adminClient(commandConfig(io.env, opts.config), opts);
  const { job: started } = (await admin('POST', `/sinks/${encodeURIComponent(sink)}/redeliver`, {
    from: opts.from,
    ...(opts.to === undefined ? {} : { to: opts.to }),
    dry_run: opts.dryRun === true,
  })) as { job: RedeliveryJob };

  const line = progressLine(io.stderr);
  let job = started;
  try {
    for (let polls = 0; job.state === 'running'; polls++) {
      line?.show(progress(job));
      await sleep(POLL_MS[Math.min(polls, POLL_MS.length - 1)]!);
      job = await read(admin, job);
    }
  } finally {
    line?.clear();
  }
  if (job.state !== 'done') throw new Error(failure(job));
  await io.out.write(`${summary(job)}\n`);
}

async function read(admin: Awaited<ReturnType<typeof adminClient>>, job: RedeliveryJob): Promise<RedeliveryJob> {
  try {
    return (await admin('GET', `/jobs/${encodeURIComponent(job.id)}`)) as RedeliveryJob;
  } catch (err) {
    if (!(err instanceof AdminReplyError && err.status === 404)) throw err;
    throw new Error(
      `the job ${job.id} is gone: the serve that ran it restarted, and jobs live in its memory. ${queuedSoFar(job)}; ` +
        'run the command again to send the rest (calls already pending are not queued twice)',
    );
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** What a terminal shows while the job runs. */
function progress(job: RedeliveryJob): string {
  const total =
    job.total === null ? 'counting calls' : `${job.done.toLocaleString('en')} of ${plural(job.total, 'call')}`;
  const percent = job.total ? ` (${Math.min(100, Math.floor((job.done / job.total) * 100))}%)` : '';
  return `${job.dry_run ? 'counting for' : 'sending to'} ${job.sink}: ${total}${percent}, ${job.queued.toLocaleString('en')} ${job.dry_run ? 'to send' : 'queued'}`;
}

const queuedSoFar = (job: RedeliveryJob) =>
  `Before it stopped it had ${job.dry_run ? 'counted' : 'queued'} ${plural(job.queued, 'call')} of ${plural(job.done, 'call')} looked at`;

function skipped({ skipped: s }: RedeliveryJob): string {
  const parts = [
    s.not_for_sink > 0 ? `${s.not_for_sink.toLocaleString('en')} not for this sink` : '',
    s.held > 0 ? `${s.held.toLocaleString('en')} held` : '',
    s.pending > 0 ? `${s.pending.toLocaleString('en')} already pending or in flight` : '',
  ].filter(Boolean);
  return parts.length === 0 ? '' : `; skipped ${parts.join(', ')}`;
}

/** The one line printed at the end. */
export function summary(job: RedeliveryJob): string {
  const period = `${plural(job.done, 'call')} received from ${job.from} to ${job.to}`;
  const retried = job.errors.length > 0 ? ` (${plural(job.errors.length, 'error')} met and retried)` : '';
  return job.dry_run
    ? `would send ${plural(job.queued, 'call')} to ${job.sink} of ${period}${skipped(job)}; dry run: nothing sent${retried}`
    : `queued ${plural(job.queued, 'call')} for ${job.sink} of ${period}${skipped(job)}${retried}`;
}

function failure(job: RedeliveryJob): string {
  const why = job.state === 'stopped' ? 'serve shut down while it ran' : `it failed: ${job.errors.at(-1)}`;
  return `the redelivery to ${job.sink} did not finish, ${why}. ${queuedSoFar(job)}; run the command again to send the rest (calls already pending are not queued twice)`;
}
