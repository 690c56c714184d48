import { setTimeout as sleep } from 'node:timers/promises';
import { CallhookError } from '../errors.js';
import type { Hook } from '../intake/pipeline.js';
import type { CallRecord } from '../record.js';
import { timeBound } from '../store/admin-query.js';
import { cursorAfter, type PeriodCalls, type PeriodCursor } from '../store/period-calls.js';
import { type Clock, nextDay } from '../web/time.js';
import type { Jobs, JobView } from './jobs.js';

/**
 * Sends the calls of a period to one sink (docs/reference.md#a-period-to-one-sink: `callhook calls redeliver --sink NAME
 * --from DATE [--to DATE]`, `POST /admin/sinks/<name>/redeliver`): a sink added after the calls were stored, a CRM
 * restored from a backup. The request is answered at once with a job (jobs.ts) that walks the period a chunk at a time
 * and makes each chunk's deliveries in one short write, with a pause after it as long as the write took, so the
 * intake's commits always get their turn.
 *
 * Which calls go is decided as at intake, by the sink's own route in each call's hook (its `when`, and whatever else
 * the route refuses, test traffic included): a call whose hook does not send to the sink, or is no longer configured,
 * does not go. A held call never goes (a release sends it). A call with a delivery to the sink that is pending or in
 * flight is not queued again. One already delivered, or dead, is sent again: a period's redelivery is a deliberate
 * resend, under the same idempotency key as any redelivery of that revision, so a sink that drops repeats drops it
 * (docs/reference.md#exactly-once-downstream). Each call gets at most one delivery to the sink (the store keeps one per
 * call and sink), and each delivery is made at least once.
 */

export interface PeriodRequest {
  /** A date (`YYYY-MM-DD`, that day in the config's `timezone`) or an ISO timestamp. */
  from: string;
  /** A date (that day included) or an ISO timestamp (excluded); up to the moment the job starts without it. */
  to?: string;
  /** Count what would be sent, and send nothing. */
  dry_run?: boolean;
}

/** A period's redelivery as `GET /admin/jobs/<id>` shows it. */
export interface RedeliveryJob extends JobView {
  kind: 'redeliver';
  sink: string;
  /** The period, [from, to), as ISO timestamps. */
  from: string;
  to: string;
  dry_run: boolean;
  /** The calls received in the period, counted when the job starts; null until then. */
  total: number | null;
  /** The calls looked at so far. */
  done: number;
  /** Deliveries made pending (a dry run: that would be). */
  queued: number;
  skipped: {
    /** Held calls: a release sends them. */
    held: number;
    /** Calls the sink's route does not take: another hook's, its `when`, test traffic. */
    not_for_sink: number;
    /** Calls whose delivery to the sink is pending or in flight already. */
    pending: number;
  };
}

export interface PeriodDeps {
  store: PeriodCalls;
  hooks: ReadonlyMap<string, Hook>;
  sinkNames: readonly string[];
  /** Wakes the delivery worker after a chunk made deliveries. */
  notify: () => void;
  /** The config's `timezone`: a date is a day there. */
  clock: Clock;
  jobs: Jobs;
  /** Calls a chunk. */
  chunk?: number;
  /** How long to wait before each new try of a chunk that failed; the job fails after the last. */
  retryDelaysMs?: readonly number[];
  now?: () => number;
}

const CHUNK = 500;
const RETRY_DELAYS_MS = [1_000, 5_000, 15_000];

/**
 * Checks the request and starts its job: 400 for a sink the serve does not have (naming those it has), a date or
 * timestamp it cannot read, or a period with nothing in it.
 */
export function redeliverPeriod(deps: PeriodDeps, sink: string, request: PeriodRequest): RedeliveryJob {
  const { sinkNames, clock, jobs, now = Date.now } = deps;
  if (!sinkNames.includes(sink))
    throw new CallhookError('BAD_REQUEST', `no sink is named ${sink} (sinks: ${sinkNames.join(', ')})`);
  const started = now();
  const from = bound(clock, request.from, 'from');
  // Never past the job's start: a call that arrives later goes to the sink as every call does, at intake.
  const given = request.to === undefined ? started : Date.parse(bound(clock, request.to, 'to'));
  const to = new Date(Math.min(given, started)).toISOString();
  if (Date.parse(from) >= Date.parse(to))
    throw new CallhookError('BAD_REQUEST', `the period from ${from} to ${to} is empty: from must come before to`);
  return jobs.start<RedeliveryJob>(
    {
      kind: 'redeliver',
      sink,
      from,
      to,
      dry_run: request.dry_run ?? false,
      total: null,
      done: 0,
      queued: 0,
      skipped: { held: 0, not_for_sink: 0, pending: 0 },
    },
    (job, signal) => walk(deps, job, signal),
  );
}

/** A `from` or `to` as an ISO timestamp: a date is that day's start in the zone, a `to` date the next day's. */
function bound(clock: Clock, value: string, name: 'from' | 'to'): string {
  // dayStart reads a date that is a real day and nothing else: anything else is a timestamp, or refused.
  if (clock.dayStart(value) !== undefined) return clock.dayStart(name === 'to' ? nextDay(value) : value)!;
  try {
    return timeBound(value, name)!;
  } catch (err) {
    throw new CallhookError('BAD_REQUEST', `${name}: ${(err as Error).message.replace(/^store: "\w+" /, '')}`);
  }
}

async function walk(deps: PeriodDeps, job: RedeliveryJob, signal: AbortSignal): Promise<void> {
  const { store, hooks, notify, chunk = CHUNK } = deps;
  const routes = new Map([...hooks].map(([name, hook]) => [name, hook.sinks.find((r) => r.name === job.sink)]));
  const wanted = (record: CallRecord) => routes.get(record.hook)?.accepts(record) ?? false;
  const retrying = <T>(work: () => Promise<T>) => withRetries(deps, job, signal, work);

  job.total = await retrying(() => store.countPeriod(job.from, job.to));
  let after: PeriodCursor | undefined;
  while (!signal.aborted) {
    const calls = await retrying(() =>
      store.periodCalls({ from: job.from, to: job.to, sink: job.sink, after, limit: chunk }),
    );
    const ids: string[] = [];
    for (const call of calls) {
      if (call.status === 'held') job.skipped.held++;
      else if (!wanted(call.record)) job.skipped.not_for_sink++;
      else if (call.delivery === 'pending' || call.delivery === 'in_flight') job.skipped.pending++;
      else ids.push(call.record.id);
    }
    const began = performance.now();
    if (job.dry_run) job.queued += ids.length;
    else if (ids.length > 0) {
      const queued = await retrying(() => store.redeliverCalls(job.sink, ids));
      job.queued += queued;
      // Taken by a delivery made meanwhile (a release, a redelivery, intake), or purged: not queued twice.
      job.skipped.pending += ids.length - queued;
      if (queued > 0) notify();
    }
    job.done += calls.length;
    if (calls.length < chunk) return;
    after = cursorAfter(calls.at(-1)!);
    // As long as the write held the store, and at least a millisecond: the intake's commits go between two chunks.
    await sleep(Math.max(1, performance.now() - began), undefined, { signal }).catch(() => undefined);
  }
}

/** Runs `work`, trying again after each delay while it fails; the failures are kept in the job's errors. */
async function withRetries<T>(
  { retryDelaysMs = RETRY_DELAYS_MS }: PeriodDeps,
  job: RedeliveryJob,
  signal: AbortSignal,
  work: () => Promise<T>,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await work();
    } catch (err) {
      const delay = retryDelaysMs[tries];
      if (delay === undefined || signal.aborted) throw err;
      job.errors.push(`${err instanceof Error ? err.message : String(err)} (trying again)`);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }
}

/** The operations with their deps bound: start a period's redelivery, read a job, stop them all on shutdown. */
export function redeliveryOperations(deps: PeriodDeps) {
  return {
    /** A promise, as every changing operation is, so what keeps it (audited.ts) is done before the reply. */
    redeliverPeriod: async (sink: string, request: PeriodRequest) => redeliverPeriod(deps, sink, request),
    job: (id: string): JobView => {
      const job = deps.jobs.get(id);
      if (!job)
        throw new CallhookError(
          'NOT_FOUND',
          `no job with id ${id} (jobs live in the memory of the serve that runs them: a restart forgets them)`,
        );
      return job;
    },
    stop: () => deps.jobs.stop(),
  };
}

export type RedeliveryOperations = ReturnType<typeof redeliveryOperations>;
