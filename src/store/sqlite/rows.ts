import { type CallRecord, storedRecord } from '../../record.js';
import type { CommitInput, Receipt } from '../calls.js';
import type { AttemptResult, ClaimedDelivery } from '../outbox.js';

/**
 * What crosses between the event loop and the SQLite store's writer (writes.ts), built where the call or the claim
 * is: plain strings, numbers and bytes, so they pass between threads as they are. The record and the raw request are
 * JSON by then, made by the caller, which has to build them anyway.
 */

/** A call as the writer inserts it. */
export interface CallRow {
  id: string;
  hook: string;
  dedup_key: string | null;
  content_hash: string;
  on_conflict: CommitInput['onConflict'];
  status: CommitInput['status'];
  source: string;
  received_at: string;
  record: string;
  raw: string;
  sinks: readonly string[];
  receipt: ReceiptRow;
  /** CommitInput.ingests */
  ingests: number | null;
}

/** A receipt as the writer inserts it; a commit sets its status, outcome and call id. */
export interface ReceiptRow {
  hook: string;
  received_at: string;
  method: string;
  content_type: string | null;
  size: number;
  status: number;
  outcome: Receipt['outcome'];
  error: string | null;
  raw_body: Uint8Array | null;
  query: string | null;
  source: string | null;
}

/** A claimed delivery with its record still JSON: it is parsed where it is delivered. */
export interface ClaimedRow {
  id: number;
  sink: string;
  attempts: number;
  record: string;
}

/** finishAttempt's arguments, as one of a turn's finished attempts crosses to the writer. */
export interface FinishedAttempt {
  id: number;
  attempt: number;
  result: AttemptResult;
  retryAt?: number;
  pauseSinkUntil?: number;
}

/** A call as the writer takes it: its record and raw request as JSON, its receipt as a row. */
export function callRow({
  record,
  contentHash,
  onConflict,
  status,
  raw,
  sinks,
  receipt,
  ingests,
}: CommitInput): CallRow {
  return {
    id: record.id,
    hook: record.hook,
    dedup_key: record.dedup_key,
    content_hash: contentHash,
    on_conflict: onConflict,
    status,
    source: record.source,
    received_at: record.received_at,
    record: JSON.stringify(record),
    raw: JSON.stringify(raw),
    sinks,
    // A receipt says where its request came from as the call does: a repeat's, the repeat's own source.
    receipt: receiptRow(receipt, 200, status, record.source),
    ingests: ingests ?? null,
  };
}

/**
 * The receipt's row, with its status, outcome and source given apart: a call's receipt takes them from the commit.
 * Written out field by field, never as `{ ...receipt, status }`: on Node 20 a spread followed by properties the spread
 * did not have costs about 0.5 µs a property, several µs a call on the request path (docs/performance.md).
 */
export function receiptRow(
  r: Omit<Receipt, 'status' | 'outcome'>,
  status: number,
  outcome: Receipt['outcome'],
  source = r.source,
): ReceiptRow {
  return {
    hook: r.hook,
    received_at: r.receivedAt,
    method: r.method,
    content_type: r.contentType,
    size: r.size,
    status,
    outcome,
    error: r.error ?? null,
    raw_body: r.rawBody ?? null,
    query: r.query ?? null,
    source: source ?? null,
  };
}

/** A claimed row as the worker takes it: its record parsed, as stored. */
export const claimedDelivery = (row: ClaimedRow): ClaimedDelivery => ({
  id: row.id,
  sink: row.sink,
  attempt: row.attempts,
  record: storedRecord(JSON.parse(row.record) as CallRecord),
});

/** Stored JSON that may not be what callhook writes (a row edited by hand): never a reason to refuse a call. */
export function parseStored(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
