import type { CallRecord, RawRequest, RecordSource } from '../record.js';
import type { CallStatus, Receipt } from './calls.js';
import type { AttemptResult, DeliveryState } from './outbox.js';
import type { PeriodCalls } from './period-calls.js';
import type { ReconcileRun } from './reconcile-run.js';
import type { SinkState } from './sink-state.js';

/**
 * What the operator's side asks of the store: the admin operations (admin/: the admin API, the dashboard and the
 * CLI) list, show, edit, release, redeliver and retry; /metrics reads the per-sink counts and states; reconcile
 * looks calls up and keeps its last run. None of it is on a sender's clock.
 */

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
  /** One source, or several (any of them): `callhook calls list --source replay,simulate`. */
  source?: RecordSource | readonly RecordSource[];
  /**
   * The voice platform that sent the call (`record.platform`, docs/reference.md#other-voice-platforms), or `none` for
   * the calling service's calls, which name none.
   */
  platform?: string;
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
   * Leaves test traffic (`source` `replay` or `simulate`, docs/reference.md#test-traffic) out, as the lists do unless
   * asked for it (admin/calls.ts); read through the partial index that holds the other calls in id order.
   */
  hideTest?: boolean;
  /**
   * The review queue (docs/reference.md#editing-a-call): held calls, and calls with problems not marked reviewed at
   * their current revision, never test traffic. Read by a scan of the calls that are not test traffic, as a text
   * search is: the queue is a page the operator opens, not a hot path.
   */
  review?: boolean;
  limit?: number;
  /** Return calls whose id sorts after this one in `order` (ids are time-ordered). */
  after?: string;
  order?: PageOrder;
}

/**
 * What an edit did to one field (docs/reference.md#editing-a-call): a side is absent when the field had no value there.
 */
export interface FieldChange {
  /** The value in `data`, or the value as received while the field had a problem. */
  before?: unknown;
  after?: unknown;
  /** Both values were removed by the retention of the field (docs/reference.md#retention). */
  removed?: 'retention';
}

/**
 * One entry of a call's edit history, kept with the call (docs/reference.md#editing-a-call): an edit, which made the
 * record's revision `revision`, or a mark that the call needs no change (`reviewed`), given at revision `revision`.
 */
export interface CallEdit {
  /** ISO 8601. */
  at: string;
  fields: Record<string, FieldChange>;
  revision: number;
  /** A review mark: the call, at `revision`, leaves the review queue; its `fields` are empty. */
  reviewed?: true;
  /**
   * Who made it: the actor's name (a user's address, `admin-token`; docs/reference.md#operators). Absent from an
   * entry kept before operators. The entry is kept whole as JSON, so this needs no column.
   */
  by?: string;
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
  /** For a refused request: the call it was ingested as, once it was (docs/reference.md#refused-requests). */
  ingestedAs: string | null;
}

export interface ListReceiptsQuery {
  /** `rejected`: the refused requests (docs/reference.md#refused-requests). */
  outcome?: Receipt['outcome'];
  hook?: string;
  /** `received_at` within [from, to): ISO timestamps or dates. */
  from?: string;
  to?: string;
  /** Leaves out the receipts of test traffic's requests (docs/reference.md#test-traffic), as the overview counts. */
  hideTest?: boolean;
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

export interface AdminQueries extends PeriodCalls {
  getCall(id: string): Promise<StoredCall | undefined>;
  listCalls(query: ListCallsQuery): Promise<StoredCall[]>;
  /**
   * Keeps an entry of the call's edit history (docs/reference.md#editing-a-call), and with an edit the record as
   * edited, in one transaction, only while the stored record is still at the revision the entry was made from:
   * `record.revision - 1` for an edit (which carries the record), `entry.revision` for a review mark. The record's id,
   * key, status and raw request stay as they are; so does what a repeat is compared with
   * (docs/reference.md#deduplication): a call that has no content hash yet gets the hash of its record as it was before
   * its first edit, as received.
   */
  editCall(callId: string, entry: CallEdit, record?: CallRecord): Promise<EditOutcome>;
  /** A call's edit history, oldest first. */
  listEdits(callId: string): Promise<CallEdit[]>;
  /**
   * Releases a held call: its status becomes accepted and deliveries are created for these sinks, in one
   * transaction. Returns false when the call does not exist or is not held.
   */
  release(callId: string, sinks: readonly string[]): Promise<boolean>;
  /**
   * Sends a stored call again to these sinks: an existing delivery (done or dead) becomes pending with a fresh
   * attempt count, a missing one is created. Deliveries in flight or already pending are left as they are.
   * Returns how many were scheduled; undefined when there is no such call.
   */
  redeliver(callId: string, sinks: readonly string[]): Promise<number | undefined>;
  listDeliveries(query: ListDeliveriesQuery): Promise<DeliveryInfo[]>;
  /** Every attempt of every delivery of a call, oldest first. */
  listAttempts(callId: string): Promise<AttemptInfo[]>;
  countDeliveries(): Promise<Record<DeliveryState, number>>;
  /** Deliveries by sink and state, with the oldest pending one's creation time (for /metrics). */
  deliveryStats(): Promise<DeliveryStat[]>;
  /**
   * Puts matching deliveries back to pending, due now, with a fresh attempt count (the attempts made so far stay
   * in the history). Returns how many. Deliveries in flight are never touched.
   */
  retryDeliveries(query: RetryQuery): Promise<number>;
  /** Every receipt of a call (the first request and its duplicates), oldest first. */
  listReceipts(callId: string): Promise<ReceiptInfo[]>;
  /** Receipts by outcome, hook and time, a page at a time. */
  listReceiptPage(query: ListReceiptsQuery): Promise<ReceiptInfo[]>;
  getReceipt(id: number): Promise<ReceiptInfo | undefined>;
  /**
   * What is kept of each sink that has any state (docs/reference.md#queues-and-databases): one row a sink, never a
   * scan.
   */
  sinkStates(): Promise<SinkState[]>;
  /**
   * An operator's pause (true) or resume (false), kept for every replica and every restart
   * (docs/reference.md#what-every-sink-shares).
   */
  setSinkPaused(sink: string, paused: boolean): Promise<void>;
  /** Keeps `run` as the last reconcile run, in place of the one kept before (docs/reference.md#dashboard). */
  recordReconcileRun(run: ReconcileRun): Promise<void>;
  /** The last reconcile run kept, or undefined when none was (or what is kept is not one: a row edited by hand). */
  lastReconcileRun(): Promise<ReconcileRun | undefined>;
}
