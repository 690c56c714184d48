/**
 * What the retention asks of the store (docs/reference.md#retention), besides `purge` (maintenance.ts), which deletes the
 * old calls. Each method looks only at what changed since its last pass, a chunk at a time (SQLite: a short transaction
 * each, the write lock free between two, so webhook commits interleave), and keeps how far it got in the store, so a
 * pass every few minutes costs what arrived or aged meanwhile, not the whole history. A pass stopped by its signal keeps
 * what it did and leaves its mark where it was: the next one looks at those rows again, and finds them done.
 */

export interface ReceiptsRetained {
  /** Receipts whose body and query were dropped (a duplicate's, a refused request's ingested as a call). */
  bodies: number;
  /** Receipts of refused requests never ingested, deleted. */
  refused: number;
}

/** A pass's present (the clock by default: tests move it), and what ends it early between two chunks (shutdown). */
export interface RetentionOptions {
  now?: Date;
  signal?: AbortSignal;
}

export interface RetentionStore {
  /**
   * Drops the body and query of the raw request of every call received before `before`, keeping its method and
   * content type, and says so in it (`retention.dropped`, RawRequest). Returns how many calls it changed.
   */
  dropRawRequests(before: Date, options?: RetentionOptions): Promise<number>;
  /**
   * Drops the bodies and query strings of the receipts received before `before`, and deletes those of refused
   * requests never ingested (the only copy of such a call: the retention is the operator's word that it may go).
   */
  dropReceipts(before: Date, options?: RetentionOptions): Promise<ReceiptsRetained>;
  /**
   * Removes `field` from every call received before `before`: its record (`data`, `extra`, a problem's value), its
   * edits, its raw request and its receipts' bodies, as privacy/retain-call.ts says. Returns how many calls it changed.
   */
  removeField(field: string, before: Date, options?: RetentionOptions): Promise<number>;
  /**
   * Makes what was removed unreadable in the store's files. SQLite: a truncating checkpoint, which copies the pages
   * overwritten with zeros (secure_delete) into the database file and empties the WAL of their older versions; false
   * when readers kept it from finishing (the next pass tries again). PostgreSQL: nothing it can do (docs/reference.md#retention).
   */
  truncateLog(): Promise<boolean>;
}

/**
 * How long after its id was made a call is sure to be committed, or never will be: a commit takes seconds at most (the
 * reply is a 503 after `store_deadline`, under 10 s). A pass looks again at what is younger than that.
 */
export const SETTLE_MS = 60_000;

/** The oldest received time there is: where a pass starts that has never run. */
export const EPOCH = new Date(0).toISOString();

/**
 * How far a kind's passes over the calls got: every call received before `through` whose id sorts at or before `seen`
 * was done. A call committed later with an older received time (a refused request ingested, a call reconcile
 * recovers) has a newer id: the next pass finds it by id.
 */
export interface CallsMark {
  through: string;
  seen: string;
}

export interface CallsPass {
  /** Calls received in [from, before): those that aged past the cutoff since the last pass. */
  byAge: { from: string; before: string };
  /** Calls with ids in (after, top] received before `before`: committed since the last pass with an older time. */
  byId: { after: string; top: string; before: string };
  /** The mark once the pass is done. */
  next: CallsMark;
}

/** The two ranges a pass over the calls reads, from its mark and its cutoff. */
export function callsPass(mark: CallsMark | undefined, before: Date, now: Date): CallsPass {
  const from = mark?.through ?? EPOCH;
  const cutoff = before.toISOString();
  const settled = new Date(now.getTime() - SETTLE_MS);
  const top = lastIdAt(settled.getTime());
  return {
    byAge: { from, before: cutoff },
    // A cutoff moved back (the duration made longer) leaves the calls between where they are.
    byId: { after: mark?.seen ?? '', top, before: minIso(cutoff, from) },
    next: { through: minIso(cutoff, settled.toISOString()), seen: mark && mark.seen > top ? mark.seen : top },
  };
}

export const minIso = (a: string, b: string) => (a < b ? a : b);

/**
 * The greatest UUIDv7 (ids.ts) made at or before `ms`: its 48 bits of time, every other bit set. Ids are lower-case hex
 * and compared as text (SQLite, and PostgreSQL's `COLLATE "C"`), so an id sorts at or before it exactly when it was
 * made at or before `ms`.
 */
export function lastIdAt(ms: number): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-ffff-ffff-ffffffffffff`;
}

/** The key under which a kind keeps its mark, in the store's `meta`. */
export const markKey = (kind: string) => `retention:${kind}`;

/** A mark as kept, or undefined when none was or it is not one (a row edited by hand: the pass starts over). */
export function parseMark<T extends object>(text: string | undefined, keys: readonly (keyof T)[]): T | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const kept = (key: keyof T) => ['string', 'number'].includes(typeof value[key as string]);
    return keys.every(kept) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
