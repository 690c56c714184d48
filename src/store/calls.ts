import type { CallRecord, RawRequest, RecordSource } from '../record.js';

/**
 * What the request path asks of the store: the intake commits a call (webhooks, reconcile, a refused request
 * ingested again), the webhook route keeps a receipt of what it refused, and an in-call hook reads a caller's
 * history. Each is on a sender's clock: every write resolves once committed.
 */

export type CallStatus = 'accepted' | 'held';
export type CommitOutcome = CallStatus | 'duplicate';

/** What every request that passed auth leaves behind, whatever its outcome (issue: receipts). */
export interface Receipt {
  hook: string;
  receivedAt: string;
  method: string;
  contentType: string | null;
  size: number;
  status: number;
  /**
   * `in-call`: an in-call lookup, answered from the store and leaving nothing but this receipt. `ignored`: a voice
   * platform's event that is not a call (docs/reference.md#other-voice-platforms), answered 200 and not kept.
   */
  outcome: CommitOutcome | 'rejected' | 'in-call' | 'ignored';
  error?: string;
  /**
   * The body as received, kept on the receipts that are the only copy of it: a refused request's, and a duplicate's
   * (docs/reference.md#deduplication: an `on_conflict: duplicate` repeat may differ from the call it is counted on). A
   * stored call's own receipt leaves it out: the call's `raw` holds it.
   */
  rawBody?: Uint8Array;
  /** The query string with its `?` (or ''), kept with the body, so a refused request can be ingested as it came. */
  query?: string;
  /**
   * Where the request came from, as its call's `source` would say (docs/reference.md#test-traffic): the overview leaves
   * test traffic's receipts, refused ones included, out of its counts.
   */
  source?: RecordSource;
}

export interface CommitInput {
  record: CallRecord;
  /** The content hash of the record's data and extra as received (normalize/dedup-key.ts). */
  contentHash: string;
  /**
   * What a stored call with the same key but other content makes of this one (docs/reference.md#deduplication):
   * `duplicate` counts it as a duplicate of that call; `keep` commits nothing and answers `conflict`, for the intake to
   * store it under its content's key.
   */
  onConflict: 'keep' | 'duplicate';
  status: CallStatus;
  raw: RawRequest;
  /** Names of the sinks that get an outbox row: only deliveries that are due are stored. */
  sinks: readonly string[];
  receipt: Omit<Receipt, 'outcome' | 'status'>;
  /**
   * The refused request's receipt this commit ingests (docs/reference.md#refused-requests): instead of a receipt of its
   * own, that receipt is marked, in the same transaction, with the call it became; a receipt ingested already fails the
   * commit.
   */
  ingests?: number;
}

export interface CommitResult {
  /** `conflict`: a stored call has the key but other content, and nothing was written (CommitInput.onConflict). */
  outcome: CommitOutcome | 'conflict';
  /** The stored record's id: for a duplicate or a conflict, the id of the stored record with that dedup key. */
  id: string;
}

export interface CallStore {
  /** Inserts the record and its outbox rows in one transaction keyed on (hook, dedup_key), with its receipt. */
  commitCall(input: CommitInput): Promise<CommitResult>;
  /**
   * A receipt for a request that passed auth but stored no call: refused (bad body, too large, store down), or an
   * in-call lookup.
   */
  recordRejection(receipt: Receipt): Promise<void>;
  /**
   * One caller's calls by `data.phone_number` (E.164), newest first, at most `limit`, and how many there are in
   * all: what an in-call hook answers from, served by the phone index.
   */
  callerHistory(phone: string, limit: number): Promise<{ count: number; records: CallRecord[] }>;
}
