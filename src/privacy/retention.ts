import type { Logger } from 'pino';
import { formatDuration } from '../duration.js';
import { scheduleEvery } from '../reconcile/schedule.js';
import type { Maintenance } from '../store/maintenance.js';
import type { OperatorStore } from '../store/operators.js';
import type { RetentionStore } from '../store/retention.js';
import { type RetentionConfig, retains } from './retention-config.js';

/**
 * The retention inside `serve` (docs/reference.md#retention): a pass every `retention.every`, never two at once, that
 * deletes the old calls as `callhook purge` does, drops raw requests and receipts' bodies, deletes old refused
 * requests, removes the listed fields, ages out the audit log, then has SQLite empty its log of what it removed. Each
 * kind is the store's, a chunk at a time (store/retention.ts), so intake keeps committing beside it; the pass logs what
 * it removed.
 */

/**
 * The audit entries one call of expireAudit may delete: the pass looks at its signal between two such calls. SQLite
 * deletes them in chunks of its own at the background pace (sqlite/operators.ts); PostgreSQL in one statement.
 */
export const AUDIT_CHUNK = 500;

export interface RetentionCounts {
  /** Calls deleted, with their deliveries, attempts and edits; receipts deleted with them or kept by no call. */
  calls: number;
  receipts: number;
  /** Calls whose raw request's body and query were dropped. */
  raw: number;
  /** Receipts whose body was dropped. */
  bodies: number;
  /** Receipts of refused requests never ingested, deleted. */
  refused: number;
  /** For each field, the calls it was removed from. */
  fields: Record<string, number>;
  /** Audit log entries aged out (retention.audit). */
  audit: number;
}

export type RetentionDeps = { store: Pick<Maintenance, 'purge'> & RetentionStore & Pick<OperatorStore, 'expireAudit'> };

/** One pass at `now`: what each rule of `config` removes now. Ends early, keeping what it did, once `signal` aborts. */
export async function retentionPass(
  config: RetentionConfig,
  { store }: RetentionDeps,
  { now = new Date(), signal }: { now?: Date; signal?: AbortSignal } = {},
): Promise<RetentionCounts> {
  const before = (ms: number) => new Date(now.getTime() - ms);
  const options = { now, signal };
  const counts: RetentionCounts = { calls: 0, receipts: 0, raw: 0, bodies: 0, refused: 0, fields: {}, audit: 0 };
  // Calls first: what goes whole need not be rewritten.
  if (config.calls !== undefined)
    Object.assign(counts, await store.purge(before(config.calls), { signal, background: true }));
  if (config.raw !== undefined) counts.raw = await store.dropRawRequests(before(config.raw), options);
  if (config.receipts !== undefined) Object.assign(counts, await store.dropReceipts(before(config.receipts), options));
  for (const [field, ms] of Object.entries(config.fields))
    counts.fields[field] = await store.removeField(field, before(ms), options);
  if (config.audit !== undefined && !signal?.aborted) {
    const cutoff = before(config.audit).toISOString();
    let deleted: number;
    do {
      deleted = await store.expireAudit(cutoff, AUDIT_CHUNK);
      counts.audit += deleted;
    } while (deleted === AUDIT_CHUNK && !signal?.aborted);
  }
  return counts;
}

/** Whether a pass removed anything. */
export const removedAny = (counts: RetentionCounts): boolean =>
  counts.calls + counts.receipts + counts.raw + counts.bodies + counts.refused + counts.audit > 0 ||
  Object.values(counts.fields).some((n) => n > 0);

/** What a pass removed, in words, the kinds it removed nothing of left out. */
export function removedText(counts: RetentionCounts): string {
  const parts = [
    counts.calls > 0 && `${counts.calls} calls deleted`,
    counts.receipts > 0 && `${counts.receipts} receipts deleted with them`,
    counts.raw > 0 && `${counts.raw} raw requests dropped`,
    counts.bodies > 0 && `${counts.bodies} receipts' bodies dropped`,
    counts.refused > 0 && `${counts.refused} refused requests deleted`,
    ...Object.entries(counts.fields).map(([field, n]) => n > 0 && `${field} removed from ${n} calls`),
    counts.audit > 0 && `${counts.audit} audit log entries deleted`,
  ];
  return parts.filter(Boolean).join(', ');
}

export interface RunningRetention {
  /** Ends the pass under way between two chunks, and waits for it. */
  stop(): Promise<void>;
}

/** Starts the passes inside `serve`; with no rule set, nothing runs. */
export function startRetention(
  config: RetentionConfig,
  { store, log }: RetentionDeps & { log: Logger },
): RunningRetention {
  if (!retains(config)) return { stop: async () => undefined };
  const stopping = new AbortController();
  // A checkpoint that readers kept from finishing is owed until one does: the next pass may remove nothing.
  let checkpointOwed = false;
  const schedule = scheduleEvery({ intervalMs: config.every, log }, async () => {
    const started = performance.now();
    let counts: RetentionCounts;
    try {
      counts = await retentionPass(config, { store }, { signal: stopping.signal });
    } catch (err) {
      // What it removed before the failure stays removed, and is owed its checkpoint; the marks of the part that
      // failed stay where they were.
      checkpointOwed = true;
      log.warn({ err }, `retention: the pass failed; the next one, in ${formatDuration(config.every)}, tries again`);
      return;
    }
    const removed = removedAny(counts);
    const seconds = Math.round(performance.now() - started) / 1000;
    if (removed) log.info({ retention: counts, seconds }, `retention: ${removedText(counts)}`);
    else log.debug({ retention: counts, seconds }, 'retention: nothing to remove');
    if ((removed || checkpointOwed) && !stopping.signal.aborted) {
      checkpointOwed = !(await store.truncateLog());
      if (checkpointOwed)
        log.warn('retention: readers kept the store from emptying its log; the next pass tries again');
    }
  });
  return {
    async stop() {
      stopping.abort();
      await schedule.stop();
    },
  };
}
