import type { Logger } from 'pino';
import { createClient } from '../client/index.js';
import type { ReconcileConfig } from '../config.js';
import type { AdminQueries } from '../store/admin-queries.js';
import { describeServiceError } from './describe-error.js';
import { keptRun } from './kept-run.js';
import { type ReconcileOptions, reconcile } from './reconcile.js';

/**
 * Runs a job every `intervalMs` inside `serve`, so lost calls are recovered without anyone remembering to run
 * `callhook reconcile`. A run never overlaps the previous one: the next is timed from the end of the last.
 * The first run comes a few seconds after start-up, once intake is serving: calls lost while the receiver was
 * down are the likeliest to be missing.
 */
export function scheduleEvery(
  {
    intervalMs,
    firstDelayMs = Math.min(intervalMs, 5_000),
    log,
  }: { intervalMs: number; firstDelayMs?: number; log: Logger },
  job: () => Promise<void>,
): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const tick = () => {
    running = job()
      .catch((err: unknown) => log.warn({ err }, 'scheduled job failed; it runs again at the next interval'))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs).unref();
      });
  };
  timer = setTimeout(tick, firstDelayMs).unref();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The `reconcile` block of the config, run inside serve: each run looks back `lookback` from its start. */
export function scheduleReconcile({
  config,
  log,
  secrets,
  onRecovered,
  ...deps
}: {
  config: ReconcileConfig;
  log: Logger;
  /** The serve's secrets, masked out of a failed run's error as kept for the overview (kept-run.ts). */
  secrets: Iterable<string>;
  store: Pick<AdminQueries, 'listCalls' | 'recordReconcileRun'>;
  /** Told how many calls a run stored whose webhook never arrived (the alerts' lost_calls, docs/reference.md#alerts). */
  onRecovered?: (stored: number) => void;
} & Omit<ReconcileOptions, 'client' | 'since' | 'dryRun' | 'onProgress' | 'defer' | 'summary' | 'store'>): {
  stop(): Promise<void>;
} {
  const client = createClient({ baseUrl: config.apiUrl, apiKey: config.apiKey });
  const every = config.intervalMs!;
  const sightings = secondSighting();
  return scheduleEvery({ intervalMs: every, log }, async () => {
    const since = new Date(Date.now() - config.lookbackMs).toISOString().slice(0, 10);
    const keeping = {
      store: deps.store,
      trigger: 'serve',
      since,
      dryRun: false,
      secrets,
      onKeepError: (err: unknown) => log.warn({ err }, 'reconcile: the run could not be kept for the dashboard'),
    } as const;
    const summary = await keptRun(keeping, async (into) => {
      try {
        return await reconcile({ ...deps, client, since, defer: sightings.defer, summary: into });
      } catch (err) {
        throw new Error(describeServiceError(err, config.apiUrl), { cause: err });
      }
    });
    sightings.endRun();
    const recovered = summary.recovered.length;
    if (recovered > 0) onRecovered?.(recovered);
    log[recovered > 0 ? 'warn' : 'info'](
      {
        campaigns: summary.campaigns,
        calls: summary.calls,
        matched: summary.matched,
        recovered,
        deferred: summary.deferred,
        since,
      },
      recovered > 0 ? 'reconcile recovered calls whose webhook never arrived' : 'reconcile found no lost calls',
    );
  });
}

/**
 * Scheduled runs store a missing call only when the run before found it missing too. A call that ended just
 * before a run is listed in its audience while its webhook may still be on the way, and a call stored by both
 * would reach the sinks twice, as two records; by the next run, at least a minute later, the webhook has come
 * or is lost. The first run after start-up stores what it finds: there is no earlier run to wait for, and what
 * was lost while the receiver was down is the likeliest to be missing.
 */
export function secondSighting(): { defer: (callId: string) => boolean; endRun: () => void } {
  let before: Set<string> | undefined;
  let now = new Set<string>();
  return {
    defer(callId) {
      now.add(callId);
      return before !== undefined && !before.has(callId);
    },
    endRun() {
      before = now;
      now = new Set();
    },
  };
}
