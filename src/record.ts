/**
 * The shape every later step sees: what sinks receive, what the JSONL file holds (contract section 3).
 */

export type Scalar = string | number | boolean;

export type ProblemCode = 'missing_required' | 'invalid_type' | 'invalid_format';

export interface Problem {
  field: string;
  code: ProblemCode;
  message: string;
}

export type RecordSource = 'webhook' | 'reconcile' | 'replay';

export interface CallRecord {
  id: string;
  hook: string;
  dedup_key: string;
  received_at: string;
  source: RecordSource;
  data: Record<string, Scalar>;
  extra: Record<string, unknown>;
  problems: Problem[];
}

/** The request as it arrived, kept in the store and shown by the admin API, never sent to sinks. */
export interface RawRequest {
  method: string;
  content_type: string | null;
  query: Record<string, string | string[]>;
  body: string;
}
