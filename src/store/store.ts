import type { CallRecord, RawRequest } from '../record.js';

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
  outcome: CommitOutcome | 'rejected';
  error?: string;
  /** The raw bytes of a body that could not be parsed, bounded by the caller. */
  rawBody?: Uint8Array;
}

export interface CommitInput {
  record: CallRecord;
  status: CallStatus;
  raw: RawRequest;
  /** Names of the sinks that get an outbox row: only deliveries that are due are stored. */
  sinks: readonly string[];
  receipt: Omit<Receipt, 'outcome' | 'status'>;
}

export interface CommitResult {
  outcome: CommitOutcome;
  /** The stored record's id: for a duplicate, the id of the first record with that dedup key. */
  id: string;
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
}

export interface StoredCall {
  record: CallRecord;
  status: CallStatus;
  raw: RawRequest;
  duplicates: number;
}

export interface ListCallsQuery {
  hook?: string;
  limit?: number;
  /** Return calls whose id sorts after this one (ids are time-ordered). */
  after?: string;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** Inserts the record and its outbox rows in one transaction keyed on (hook, dedup_key), with its receipt. */
  commitCall(input: CommitInput): Promise<CommitResult>;
  /** A receipt for a request that passed auth but was refused (bad body, too large, store down). */
  recordRejection(receipt: Receipt): Promise<void>;
  /** Leases up to `limit` due deliveries of one sink; an expired lease counts as due. */
  claimDeliveries(sink: string, limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /** Records the attempt and moves the delivery on: done, back to pending at `retryAt`, or dead. */
  finishAttempt(deliveryId: number, result: AttemptResult, retryAt?: number): Promise<void>;
  /**
   * At start-up of the serving process: SQLite has one serving process per file, so every lease it finds was
   * left by a killed process and is taken back at once; PostgreSQL leases are shared and simply expire.
   */
  resumeInFlight(): Promise<number>;
  /** Puts leased deliveries back to pending without counting an attempt (used on shutdown). */
  releaseLeases(deliveryIds: readonly number[]): Promise<void>;
  /** Milliseconds until the next delivery of `sink` is due, or undefined when none is pending. */
  nextDueIn(sink: string): Promise<number | undefined>;
  getCall(id: string): Promise<StoredCall | undefined>;
  listCalls(query: ListCallsQuery): Promise<StoredCall[]>;
  countDeliveries(): Promise<Record<DeliveryState, number>>;
  /**
   * Deletes calls received before `before` with their deliveries and attempts, and receipts received before it.
   * A call with a delivery still pending or in flight is kept: purging never drops what is owed to a sink.
   */
  purge(before: Date): Promise<{ calls: number; receipts: number }>;
  /** Resolves when a write can be committed now; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
