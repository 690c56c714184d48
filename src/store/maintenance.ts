import type { RecordSource } from '../record.js';

/**
 * What keeps the store itself: a serve takes back its leases at start-up, answers /readyz with a probe and closes
 * the store last; `callhook purge` deletes what is no longer owed.
 */

/** What a serving process found at start-up (Maintenance.resumeInFlight). */
export interface Resumed {
  /** Deliveries left in flight by a killed process, now pending again. */
  resumed: number;
  /** Another serve was running on the same SQLite file: its deliveries in flight were left to it. */
  besideAnother: boolean;
}

export interface PurgeCounts {
  calls: number;
  receipts: number;
}

/** Test traffic (docs/reference.md#the-record): the only sources a purge takes by source. */
export const TEST_SOURCES = ['replay', 'simulate'] as const satisfies readonly RecordSource[];
export type TestSource = (typeof TEST_SOURCES)[number];

export interface PurgeOptions {
  /** Also the receipts of refused requests not yet ingested (`callhook purge --include-refused`). */
  includeRefused?: boolean;
  /**
   * Test traffic of these sources instead (`callhook purge --source replay,simulate`), by the rule of
   * docs/reference.md#command-line: a test call goes whatever its age (unless a cutoff is given too), held or not, with
   * its deliveries pending or dead, unless one is in flight (a worker is sending it now); its receipts go with it. A
   * refused request has no source, so `includeRefused` does not go with it.
   */
  sources?: readonly TestSource[];
  /** Gets the running totals where the store purges in steps (SQLite: after each chunk). */
  onProgress?: (purged: PurgeCounts) => void;
  /**
   * Ends a purge between two of its steps (SQLite), keeping what it deleted: the retention's, at shutdown. PostgreSQL
   * purges in one statement, which a signal given before keeps from starting.
   */
  signal?: AbortSignal;
  /**
   * A purge nobody waits for (the retention's): on SQLite smaller chunks, and the write lock left free longer between
   * them (sqlite/chunks.ts BACKGROUND), so intake does not notice it.
   */
  background?: boolean;
}

export interface Maintenance {
  /**
   * Called once, at start-up of a serving process, and returns how many deliveries it took back. On SQLite, a
   * serve that finds no other serve running on the file takes back at once every lease it finds (a killed
   * process's); beside a running serve it takes back none, and leases expire. PostgreSQL leases always expire.
   */
  resumeInFlight(): Promise<Resumed>;
  /**
   * Deletes what is older than `before` and no longer owed (docs/reference.md#command-line, `callhook purge`): calls
   * received before it, with their deliveries and attempts, and receipts received before it. It never deletes a held
   * call (the store is its only copy), a call with a delivery that is not done (pending, in flight or dead: still owed
   * to a sink), the receipts of a call it keeps (a call's receipts, and a refused request's ingested as it, are part of
   * its history), nor, unless `includeRefused`, the receipt of a refused request not yet ingested (the only copy of a
   * call the sender will not send again, docs/reference.md#refused-requests). With `sources`, only test calls of those
   * sources and their receipts, by the rule given there; `before` may then be null (whatever their age).
   */
  purge(before: Date | null, options?: PurgeOptions): Promise<PurgeCounts>;
  /** What purge with the same cutoff and options would delete now, counted without deleting anything. */
  purgeable(
    before: Date | null,
    options?: Omit<PurgeOptions, 'onProgress' | 'signal' | 'background'>,
  ): Promise<PurgeCounts>;
  /** Resolves when a write can be committed now; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The checks both stores make on a purge before any SQL, so a caller that gets past the types still never purges real
 * calls by source, nor everything: the test sources asked for, once each, or undefined for a purge by age.
 */
export function purgeSources(before: Date | null, { sources, includeRefused }: PurgeOptions): TestSource[] | undefined {
  if (sources === undefined) {
    if (before === null) throw new Error('store: a purge needs a cutoff (before) or test sources');
    return undefined;
  }
  const real = sources.find((source) => !(TEST_SOURCES as readonly string[]).includes(source));
  if (real !== undefined)
    throw new Error(`store: a purge by source takes test traffic only, not ${JSON.stringify(real)}`);
  if (sources.length === 0) throw new Error('store: a purge by source needs at least one source');
  if (includeRefused) throw new Error('store: a refused request has no source: includeRefused purges by age only');
  return [...new Set(sources)];
}
