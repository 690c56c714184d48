import { maskSecrets } from '../secrets.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { ReconcileRun } from '../store/reconcile-run.js';
import { emptySummary, type ReconcileSummary } from './reconcile.js';

/**
 * Every reconcile run, `callhook reconcile`'s and serve's scheduled ones, a dry run too, ends by keeping what it did in
 * the store (AdminQueries.recordReconcileRun), for the dashboard's overview (docs/reference.md#dashboard). A failed run
 * is kept with what it had done when it failed, and its error masked: the overview shows no secret
 * (docs/reference.md#dashboard) and the store keeps no phone number outside a call (a person's data is found by looking
 * in calls).
 */

export interface RunKeeping {
  store: Pick<AdminQueries, 'recordReconcileRun'>;
  trigger: ReconcileRun['trigger'];
  since: string | undefined;
  dryRun: boolean;
  /** The secrets of the config and of the command line, read when the run ends (a serve's set grows). */
  secrets: Iterable<string>;
  /** Told when the run could not be kept; the run's own outcome stands. */
  onKeepError: (err: unknown) => void;
  now?: () => Date;
}

/** `run` fills the summary it is given as it goes, so a run that fails still says what it had done. */
export async function keptRun(
  keeping: RunKeeping,
  run: (summary: ReconcileSummary) => Promise<ReconcileSummary>,
): Promise<ReconcileSummary> {
  const { store, trigger, since, dryRun, secrets, onKeepError, now = () => new Date() } = keeping;
  const startedAt = now().toISOString();
  let summary = emptySummary();
  let failure: { error: unknown } | undefined;
  try {
    summary = await run(summary);
    return summary;
  } catch (error) {
    failure = { error };
    throw error;
  } finally {
    const kept: ReconcileRun = {
      startedAt,
      finishedAt: now().toISOString(),
      trigger,
      since: since ?? null,
      dryRun,
      campaigns: summary.campaigns,
      calls: summary.calls,
      stored: summary.recovered.length,
      alreadyReceived: summary.matched,
      deferred: summary.deferred,
      errors: failure ? 1 : 0,
      error: failure ? maskedRunError(errorText(failure.error), secrets) : null,
    };
    await store.recordReconcileRun(kept).catch(onKeepError);
  }
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Longer is a body quoted whole: the overview needs the cause, the log has the rest. */
const MAX_ERROR = 300;
/**
 * Seven digits or more, with spaces, dashes or brackets between, an optional + or ( before: a phone number written any
 * way.
 */
const PHONE_LIKE = /\+?\(?\d[\d\s()-]{5,}\d/g;
const DATE = /^\d{4}-\d{2}-\d{2}/;

/** The error as kept: every secret and every phone-like number replaced by `***`, and cut to a line's length. */
export function maskedRunError(text: string, secrets: Iterable<string>): string {
  // Masked before it is cut, so no secret survives half-cut.
  const masked = (maskSecrets(text, [...secrets]) as string).replace(PHONE_LIKE, (run) =>
    run.replace(/\D/g, '').length >= 7 && !DATE.test(run) ? '***' : run,
  );
  const line = masked.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR ? `${line.slice(0, MAX_ERROR - 1)}…` : line;
}
