import { z } from 'zod';

/**
 * The last reconcile run as both stores keep it: one row of `meta` (there since each store's first migration, so
 * no migration), its value this JSON. One row, replaced by each run: the overview shows the last run, and the log
 * has every run's summary.
 */

/**
 * One `reconcile` run, kept for the dashboard's overview (docs/reference.md#dashboard: "the last reconcile run"). Only
 * the last is kept, as the one `meta` row below; its error is masked before it is kept (no secret, no phone number).
 */
export interface ReconcileRun {
  /** ISO 8601. */
  startedAt: string;
  finishedAt: string;
  /** `cli`: `callhook reconcile`; `serve`: the config's schedule. */
  trigger: 'cli' | 'serve';
  /** The first day of campaigns read (YYYY-MM-DD); null when every campaign was. */
  since: string | null;
  /** Stored nothing: `stored` is what it would have stored. */
  dryRun: boolean;
  /** Campaigns read (those skipped as not started or too old left out). */
  campaigns: number;
  /** Placed calls found in their audiences. */
  calls: number;
  /** Calls it stored whose webhook never arrived (in a dry run: would have). */
  stored: number;
  /** Placed calls found already received. */
  alreadyReceived: number;
  /** Missing calls left for the next run (a scheduled run stores one on its second sighting). */
  deferred: number;
  /** Errors the run met; a run stops at its first, so 0 or 1, and the counts are what it had done by then. */
  errors: number;
  /** The first error's text, masked; null without one. */
  error: string | null;
}

export const RECONCILE_RUN_KEY = 'last-reconcile';

const count = z.number().int().nonnegative();

const Kept = z.object({
  started_at: z.string(),
  finished_at: z.string(),
  trigger: z.enum(['cli', 'serve']),
  since: z.string().nullable(),
  dry_run: z.boolean(),
  campaigns: count,
  calls_found: count,
  stored: count,
  already_received: count,
  deferred: count,
  errors: count,
  first_error: z.string().nullable(),
});

export function reconcileRunJson(run: ReconcileRun): string {
  return JSON.stringify({
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    trigger: run.trigger,
    since: run.since,
    dry_run: run.dryRun,
    campaigns: run.campaigns,
    calls_found: run.calls,
    stored: run.stored,
    already_received: run.alreadyReceived,
    deferred: run.deferred,
    errors: run.errors,
    first_error: run.error,
  } satisfies z.infer<typeof Kept>);
}

/** The kept value read back; undefined when there is none, or it is not one (a row edited by hand). */
export function parseReconcileRun(text: string | null | undefined): ReconcileRun | undefined {
  if (text == null) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const kept = Kept.safeParse(value);
  if (!kept.success) return undefined;
  const k = kept.data;
  return {
    startedAt: k.started_at,
    finishedAt: k.finished_at,
    trigger: k.trigger,
    since: k.since,
    dryRun: k.dry_run,
    campaigns: k.campaigns,
    calls: k.calls_found,
    stored: k.stored,
    alreadyReceived: k.already_received,
    deferred: k.deferred,
    errors: k.errors,
    error: k.first_error,
  };
}
