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

export interface PurgeOptions {
  /** Also the receipts of refused requests not yet ingested (`callhook purge --include-refused`). */
  includeRefused?: boolean;
  /** Gets the running totals where the store purges in steps (SQLite: after each chunk). */
  onProgress?: (purged: PurgeCounts) => void;
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
   * call the sender will not send again, docs/reference.md#refused-requests).
   */
  purge(before: Date, options?: PurgeOptions): Promise<PurgeCounts>;
  /** What purge with the same cutoff and options would delete now, counted without deleting anything. */
  purgeable(before: Date, options?: Omit<PurgeOptions, 'onProgress'>): Promise<PurgeCounts>;
  /** Resolves when a write can be committed now; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
