/**
 * The shape every later step sees: what sinks receive, what the JSONL file holds (docs/reference.md#normalising).
 */

export type Scalar = string | number | boolean;

export type ProblemCode = 'missing_required' | 'invalid_type' | 'invalid_format';

export interface Problem {
  field: string;
  code: ProblemCode;
  message: string;
  /** The value as received, for `invalid_type` and `invalid_format`: a sink still gets what the caller said. */
  value?: unknown;
}

/**
 * Where a record came from (docs/reference.md#normalising): the sender, `callhook reconcile`, a refused request
 * ingested again, `callhook replay` or `callhook simulate`.
 */
export const RECORD_SOURCES = ['webhook', 'reconcile', 'recovered', 'replay', 'simulate'] as const;
export type RecordSource = (typeof RECORD_SOURCES)[number];

/**
 * Test traffic (docs/reference.md#test-traffic): what `callhook replay` and `callhook simulate` sent. It is stored like
 * any call, but goes only to the sinks that take it (routing/routes.ts), and the overview, the review queue and the
 * call listings leave it out unless asked.
 */
export const TEST_SOURCES = ['replay', 'simulate'] as const satisfies readonly RecordSource[];

export function isTestTraffic(source: string): boolean {
  return (TEST_SOURCES as readonly string[]).includes(source);
}

export interface CallRecord {
  id: string;
  hook: string;
  /**
   * null when no declared parameter has a value: such a call is never a duplicate (docs/reference.md#deduplication).
   */
  dedup_key: string | null;
  received_at: string;
  source: RecordSource;
  /** 1 as received, one more for each edit (docs/reference.md#editing-a-call). */
  revision: number;
  data: Record<string, Scalar>;
  extra: Record<string, unknown>;
  problems: Problem[];
  /**
   * The stored call with the same dedup key whose content differs (docs/reference.md#deduplication, `on_conflict:
   * keep`).
   */
  conflicts_with?: string;
  /** The voice platform that sent it (docs/reference.md#other-voice-platforms); absent for the calling service's. */
  platform?: string;
}

/** The request as it arrived, kept in the store and shown by the admin API, never sent to sinks. */
export interface RawRequest {
  method: string;
  content_type: string | null;
  query: Record<string, string | string[]>;
  body: string;
  /** What the retention removed from it (docs/reference.md#retention); absent while it removed nothing. */
  retention?: RawRetention;
}

export interface RawRetention {
  /** ISO 8601: when the body and query were dropped (the method and content type stay). */
  dropped?: string;
  /** The fields removed from the call: from `data`, `extra`, the edits, this request and its receipts. */
  fields?: string[];
}

/**
 * A record as read back from the store. One stored before records carried `revision` (store migration 4 rewrites
 * no row) is a record as received: revision 1.
 */
export function storedRecord(record: CallRecord): CallRecord {
  if (record.revision === undefined) record.revision = 1;
  return record;
}
