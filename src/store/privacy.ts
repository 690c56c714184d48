/**
 * What the store answers for a person's access and erasure requests (docs/reference.md#erasure): everything it keeps
 * about them, found by a pattern of their number's spellings or their address, and removed in one transaction, with
 * the erasure log that says when without saying who.
 */

/** How a person is recognised in stored text: any spelling of their number (a regular expression), or an address. */
export type PersonMatch = { kind: 'phone'; pattern: string } | { kind: 'email'; value: string };

/** Where the person is kept: the ids of their calls and of the other receipts that hold them. */
export interface PersonFound {
  /** Every call whose record, raw request or edits hold them, oldest first. */
  callIds: string[];
  /** Receipts not of those calls whose raw body or query holds them: refused requests, mostly. */
  receiptIds: number[];
}

export interface ErasureCounts {
  calls: number;
  /** The receipts of those calls (first requests and duplicates) and the other receipts that held the person. */
  receipts: number;
  edits: number;
  deliveries: number;
  attempts: number;
}

export interface ErasedPerson {
  counts: ErasureCounts;
  /** The records each sink was given (delivered, or a delivery in flight), by sink: where else to erase. */
  delivered: { sink: string; recordIds: string[] }[];
}

/** One erasure as the log keeps it: never the person, only a keyed hash of them (privacy/person.ts personHash). */
export interface ErasureEntry {
  id: string;
  /** ISO 8601. */
  at: string;
  /** Who asked: `admin-token`, or a user's address. */
  actor: string;
  /** `phone` or `email`. */
  kind: string;
  hash: string;
  /** What was removed, by kind, and by sink downstream. */
  counts: Record<string, unknown>;
}

export interface PrivacyStore {
  /** Where the person is kept: a scan of the calls, their edits and the receipts' bodies, off the event loop. */
  findPerson(match: PersonMatch): Promise<PersonFound>;
  /**
   * Removes everything kept about the person, in one transaction: their calls with raw requests, edits, receipts,
   * deliveries (pending ones cancelled) and attempts, and the other receipts that held them. With `dryRun`, counts
   * what would go and removes nothing. On SQLite the removed content is overwritten and the WAL truncated after.
   */
  erasePerson(match: PersonMatch, options: { dryRun: boolean }): Promise<ErasedPerson>;
  /** The store's key for the erasure log's hashes, made once and kept (32 random bytes). */
  erasureKey(): Promise<Buffer>;
  recordErasure(entry: ErasureEntry): Promise<void>;
  /** The erasures of the person with this hash, oldest first. */
  erasures(hash: string): Promise<ErasureEntry[]>;
}
