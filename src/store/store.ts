import type { CallRecord, RawRequest, RecordSource } from '../record.js';

/**
 * What the rest of callhook needs from durable storage. Two implementations keep it: SQLite (one machine)
 * and PostgreSQL (several replicas). Every write that precedes a 200 is committed before its promise resolves.
 */

export type CallStatus = 'accepted' | 'held';
export type CommitOutcome = CallStatus | 'duplicate';
export type DeliveryState = 'pending' | 'in_flight' | 'done' | 'dead';

/** What every request that passed auth leaves behind, whatever its outcome (issue: receipts). */
export interface Receipt {
  hook: string;
  receivedAt: string;
  method: string;
  contentType: string | null;
  size: number;
  status: number;
  /** `in-call`: an in-call lookup, answered from the store and leaving nothing but this receipt. */
  outcome: CommitOutcome | 'rejected' | 'in-call';
  error?: string;
  /**
   * The body as received, kept on the receipts that are the only copy of it: a refused request's, and a
   * duplicate's (contract section 4: an `on_conflict: duplicate` repeat may differ from the call it is counted on).
   * A stored call's own receipt leaves it out: the call's `raw` holds it.
   */
  rawBody?: Uint8Array;
  /** The query string with its `?` (or ''), kept with the body, so a refused request can be ingested as it came. */
  query?: string;
}

export interface CommitInput {
  record: CallRecord;
  /** The content hash of the record's data and extra as received (normalize/dedup-key.ts). */
  contentHash: string;
  /**
   * What a stored call with the same key but other content makes of this one (contract section 4): `duplicate`
   * counts it as a duplicate of that call; `keep` commits nothing and answers `conflict`, for the intake to store
   * it under its content's key.
   */
  onConflict: 'keep' | 'duplicate';
  status: CallStatus;
  raw: RawRequest;
  /** Names of the sinks that get an outbox row: only deliveries that are due are stored. */
  sinks: readonly string[];
  receipt: Omit<Receipt, 'outcome' | 'status'>;
  /**
   * The refused request's receipt this commit ingests (contract section 6): instead of a receipt of its own, that
   * receipt is marked, in the same transaction, with the call it became; a receipt ingested already fails the commit.
   */
  ingests?: number;
}

export interface CommitResult {
  /** `conflict`: a stored call has the key but other content, and nothing was written (CommitInput.onConflict). */
  outcome: CommitOutcome | 'conflict';
  /** The stored record's id: for a duplicate or a conflict, the id of the stored record with that dedup key. */
  id: string;
}

/** What a serving process found at start-up (Store.resumeInFlight). */
export interface Resumed {
  /** Deliveries left in flight by a killed process, now pending again. */
  resumed: number;
  /** Another serve was running on the same SQLite file: its deliveries in flight were left to it. */
  besideAnother: boolean;
}

export interface ClaimedDelivery {
  id: number;
  sink: string;
  /** 1 for the first attempt; counts every attempt made, including one cut short by a crash. */
  attempt: number;
  record: CallRecord;
}

export interface AttemptResult {
  startedAt: string;
  durationMs: number;
  outcome: 'ok' | 'retry' | 'dead';
  httpStatus?: number;
  error?: string;
  /** What a successful attempt says it did, when a sink says so (sink.ts `DeliveryResult`). */
  note?: string;
}

export interface StoredCall {
  record: CallRecord;
  status: CallStatus;
  raw: RawRequest;
  duplicates: number;
}

/** `asc` (oldest first, the default) or `desc` (newest first); the cursor `after` goes in the same direction. */
export type PageOrder = 'asc' | 'desc';

export interface ListCallsQuery {
  hook?: string;
  status?: CallStatus;
  source?: RecordSource;
  /** `data.call_outcome`, compared ignoring case and surrounding spaces. */
  outcome?: string;
  /** `data.sentiment_analysis`, compared ignoring case. */
  sentiment?: string;
  /** `data.phone_number`, exactly (E.164). */
  phone?: string;
  /** `data.recording_url`, exactly: how reconciliation finds a call the service also knows. */
  recordingUrl?: string;
  /** `received_at` within [from, to): ISO timestamps or dates. */
  from?: string;
  to?: string;
  /** Case-insensitive substring of the record's JSON (names, summaries, ids). */
  text?: string;
  /**
   * The review queue (contract section 11): held calls, and calls with problems not marked reviewed at their
   * current revision. Read by a scan, as a text search is: the queue is a page the operator opens, not a hot path.
   */
  review?: boolean;
  limit?: number;
  /** Return calls whose id sorts after this one in `order` (ids are time-ordered). */
  after?: string;
  order?: PageOrder;
}

/** What an edit did to one field (contract section 11): a side is absent when the field had no value there. */
export interface FieldChange {
  /** The value in `data`, or the value as received while the field had a problem. */
  before?: unknown;
  after?: unknown;
}

/**
 * One entry of a call's edit history, kept with the call (contract section 11): an edit, which made the record's
 * revision `revision`, or a mark that the call needs no change (`reviewed`), given at revision `revision`.
 */
export interface CallEdit {
  /** ISO 8601. */
  at: string;
  fields: Record<string, FieldChange>;
  revision: number;
  /** A review mark: the call, at `revision`, leaves the review queue; its `fields` are empty. */
  reviewed?: true;
}

/** `stale`: the stored revision is not the one the entry was made from (another edit came first); nothing written. */
export type EditOutcome = 'edited' | 'stale' | 'missing';

export interface DeliveryInfo {
  id: number;
  callId: string;
  sink: string;
  state: DeliveryState;
  attempts: number;
  /** Epoch ms when a pending delivery is due. */
  nextAttemptAt: number;
  lastError: string | null;
  /** Epoch ms of the last change. */
  updatedAt: number;
}

export interface ListDeliveriesQuery {
  state?: DeliveryState;
  sink?: string;
  callId?: string;
  limit?: number;
  /** Deliveries whose id is greater than this one. */
  after?: number;
}

export interface AttemptInfo {
  deliveryId: number;
  sink: string;
  attempt: number;
  startedAt: string;
  durationMs: number;
  outcome: AttemptResult['outcome'];
  httpStatus: number | null;
  error: string | null;
  note: string | null;
}

export interface ReceiptInfo {
  id: number;
  hook: string;
  /** The call it stored, was a duplicate of, or (for a refused request) was ingested as. */
  callId: string | null;
  receivedAt: string;
  method: string;
  contentType: string | null;
  size: number;
  status: number;
  outcome: Receipt['outcome'];
  error: string | null;
  /** The body as received, on a refused request's and a duplicate's receipt (Receipt.rawBody). */
  rawBody: Uint8Array | null;
  query: string | null;
  /** For a refused request: the call it was ingested as, once it was (contract section 6). */
  ingestedAs: string | null;
}

export interface ListReceiptsQuery {
  /** `rejected`: the refused requests (contract section 6). */
  outcome?: Receipt['outcome'];
  hook?: string;
  /** `received_at` within [from, to): ISO timestamps or dates. */
  from?: string;
  to?: string;
  limit?: number;
  /** Receipts after this id in `order`. */
  after?: number;
  order?: PageOrder;
}

/** Which deliveries a bulk retry takes: dead ones by default, narrowed by sink, call or ids. */
export interface RetryQuery {
  state?: 'dead' | 'pending';
  sink?: string;
  callId?: string;
  ids?: readonly number[];
}

export interface DeliveryStat {
  sink: string;
  state: DeliveryState;
  count: number;
  /** For pending deliveries: epoch ms of the oldest one's creation, so its age can be reported. */
  oldestCreatedAt: number | null;
}

/** One sink's kept state (contract section 9), epoch milliseconds. */
export interface SinkState {
  sink: string;
  /** An operator's last word: paused (true) or resumed (false); null when none was ever given, and the config decides. */
  paused: boolean | null;
  /** When an operator last paused or resumed it. */
  pausedChangedAt: number | null;
  /** A 429 holds every delivery of the sink until then. */
  pausedUntil: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
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

/**
 * One `reconcile` run, kept for the dashboard's overview (contract section 11: "the last reconcile run"). Only the
 * last is kept, as one `meta` row (reconcile-run.ts); its error is masked before it is kept (no secret, no phone
 * number).
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

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Inserts the record and its outbox rows in one transaction keyed on (hook, dedup_key), with its receipt. */
  commitCall(input: CommitInput): Promise<CommitResult>;
  /** A receipt for a request that passed auth but stored no call: refused (bad body, too large, store down), or an in-call lookup. */
  recordRejection(receipt: Receipt): Promise<void>;
  /**
   * Leases up to `limit` due deliveries of one sink; an expired lease counts as due. None while the sink is held
   * (sink-state.ts: paused by an operator, or by `pausedByDefault` when no operator ever said, or waiting out a
   * 429), checked in the claim itself, so no claim that starts after a pause is committed spends an attempt.
   */
  claimDeliveries(sink: string, limit: number, leaseMs: number, pausedByDefault?: boolean): Promise<ClaimedDelivery[]>;
  /**
   * Records the attempt and moves the delivery on: done, back to pending at `retryAt`, or dead. Only while the
   * delivery is still in flight as this attempt: a worker whose lease expired and was taken over changes nothing
   * (and gets false). In the same write it keeps the sink's state: its last success or last error, and, for a
   * 429, `pauseSinkUntil`, which holds every delivery of the sink on every replica (contract section 9).
   */
  finishAttempt(deliveryId: number, attempt: number, result: AttemptResult, retryAt?: number, pauseSinkUntil?: number): Promise<boolean>;
  /**
   * Called once, at start-up of a serving process, and returns how many deliveries it took back. On SQLite, a
   * serve that finds no other serve running on the file takes back at once every lease it finds (a killed
   * process's); beside a running serve it takes back none, and leases expire. PostgreSQL leases always expire.
   */
  resumeInFlight(): Promise<Resumed>;
  /** Puts leased deliveries back to pending without counting an attempt (used on shutdown). */
  releaseLeases(deliveryIds: readonly number[]): Promise<void>;
  /**
   * Milliseconds until the next delivery of `sink` is due, or undefined when none is pending or the sink is paused;
   * while it waits out a 429, not before the wait ends.
   */
  nextDueIn(sink: string, pausedByDefault?: boolean): Promise<number | undefined>;
  /** What is kept of each sink that has any state (contract section 9): one row a sink, never a scan. */
  sinkStates(): Promise<SinkState[]>;
  /** An operator's pause (true) or resume (false), kept for every replica and every restart (contract section 9). */
  setSinkPaused(sink: string, paused: boolean): Promise<void>;
  /** The sink's last error when there was no attempt to record it with: a sink that could not be opened. */
  recordSinkError(sink: string, error: string): Promise<void>;
  /** Keeps `run` as the last reconcile run, in place of the one kept before (contract section 11). */
  recordReconcileRun(run: ReconcileRun): Promise<void>;
  /** The last reconcile run kept, or undefined when none was (or what is kept is not one: a row edited by hand). */
  lastReconcileRun(): Promise<ReconcileRun | undefined>;
  getCall(id: string): Promise<StoredCall | undefined>;
  listCalls(query: ListCallsQuery): Promise<StoredCall[]>;
  /**
   * One caller's calls by `data.phone_number` (E.164), newest first, at most `limit`, and how many there are in
   * all: what an in-call hook answers from, served by the phone index.
   */
  callerHistory(phone: string, limit: number): Promise<{ count: number; records: CallRecord[] }>;
  countDeliveries(): Promise<Record<DeliveryState, number>>;
  /** Deliveries by sink and state, with the oldest pending one's creation time (for /metrics). */
  deliveryStats(): Promise<DeliveryStat[]>;
  listDeliveries(query: ListDeliveriesQuery): Promise<DeliveryInfo[]>;
  /** Every attempt of every delivery of a call, oldest first. */
  listAttempts(callId: string): Promise<AttemptInfo[]>;
  /** Every receipt of a call (the first request and its duplicates), oldest first. */
  listReceipts(callId: string): Promise<ReceiptInfo[]>;
  /** Receipts by outcome, hook and time, a page at a time. */
  listReceiptPage(query: ListReceiptsQuery): Promise<ReceiptInfo[]>;
  getReceipt(id: number): Promise<ReceiptInfo | undefined>;
  /**
   * Puts matching deliveries back to pending, due now, with a fresh attempt count (the attempts made so far stay
   * in the history). Returns how many. Deliveries in flight are never touched.
   */
  retryDeliveries(query: RetryQuery): Promise<number>;
  /**
   * Sends a stored call again to these sinks: an existing delivery (done or dead) becomes pending with a fresh
   * attempt count, a missing one is created. Deliveries in flight or already pending are left as they are.
   * Returns how many were scheduled; undefined when there is no such call.
   */
  redeliver(callId: string, sinks: readonly string[]): Promise<number | undefined>;
  /**
   * Releases a held call: its status becomes accepted and deliveries are created for these sinks, in one
   * transaction. Returns false when the call does not exist or is not held.
   */
  release(callId: string, sinks: readonly string[]): Promise<boolean>;
  /**
   * Keeps an entry of the call's edit history (contract section 11), and with an edit the record as edited, in one
   * transaction, only while the stored record is still at the revision the entry was made from: `record.revision - 1`
   * for an edit (which carries the record), `entry.revision` for a review mark. The record's id, key, status and raw
   * request stay as they are; so does what a repeat is compared with (contract section 4): a call that has no
   * content hash yet gets the hash of its record as it was before its first edit, as received.
   */
  editCall(callId: string, entry: CallEdit, record?: CallRecord): Promise<EditOutcome>;
  /** A call's edit history, oldest first. */
  listEdits(callId: string): Promise<CallEdit[]>;
  /**
   * Deletes what is older than `before` and no longer owed (contract section 7, `callhook purge`): calls received
   * before it, with their deliveries and attempts, and receipts received before it. It never deletes a held call
   * (the store is its only copy), a call with a delivery that is not done (pending, in flight or dead: still owed
   * to a sink), the receipts of a call it keeps (a call's receipts, and a refused request's ingested as it, are part
   * of its history), nor, unless `includeRefused`, the receipt of a refused request not yet ingested (the only copy
   * of a call the sender will not send again, contract section 6).
   */
  purge(before: Date, options?: PurgeOptions): Promise<PurgeCounts>;
  /** What purge with the same cutoff and options would delete now, counted without deleting anything. */
  purgeable(before: Date, options?: Omit<PurgeOptions, 'onProgress'>): Promise<PurgeCounts>;
  /** Resolves when a write can be committed now; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Generated keys kept where every replica reads them (contract section 1: with DATABASE_URL, made once by the
   * replica that starts first). PostgreSQL only: SQLite's serve keeps them in files in its data dir.
   */
  keptKeys?: KeptKeysStore;
}

/** Keys by name (`api-keys`, `admin-token`), newest first, as the data dir's key files hold them. */
export interface KeptKeysStore {
  /** The keys kept under `name`; when there are none yet, `keys` are kept, and `created` says this call kept them. */
  ensure(name: string, keys: readonly string[]): Promise<{ keys: string[]; created: boolean }>;
  /** The keys kept under `name`, or undefined when none ever were. */
  read(name: string): Promise<string[] | undefined>;
  /** Keeps `key` first under `name`, before the keys kept already, or alone when `replace`. */
  add(name: string, key: string, replace: boolean): Promise<void>;
}
