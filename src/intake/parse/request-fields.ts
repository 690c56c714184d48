import type { RawRequest, RecordSource } from '../../record.js';
import type { Receipt } from '../../store/calls.js';
import { parseBody } from './parse-body.js';
import { parseQuery } from './parse-query.js';

/**
 * A webhook request as bytes and headers, the way it leaves the HTTP layer: plain data, so it can be read on the
 * event loop or sent to the thread that commits it.
 */
export interface WebhookRequest {
  hook: string;
  method: string;
  contentType: string | null;
  /** The query string with its `?`, or ''. */
  search: string;
  body: Uint8Array;
  receivedAt: string;
  /**
   * `replay` or `simulate` when `callhook replay` or `simulate` sent it (sourceOf), `recovered` when it is a refused
   * request ingested again (admin/receipts.ts); a call of the sender's otherwise.
   */
  source: Extract<RecordSource, 'webhook' | 'replay' | 'simulate' | 'recovered'>;
  /** For `recovered`: the refused request's receipt, marked with the call it becomes (CommitInput.ingests). */
  ingests?: number;
}

/** What is known of a request before its body is read. */
export type RequestHead = Pick<WebhookRequest, 'hook' | 'method' | 'contentType' | 'receivedAt' | 'source'>;

/**
 * The header `callhook replay` and `callhook simulate` send, so the records they make say `source: replay` or
 * `simulate` (docs/reference.md#normalising) and test traffic can be told from real calls (and left out with `when`).
 * Only an authenticated request is stored, and no other source can be claimed this way.
 */
export const SOURCE_HEADER = 'x-callhook-source';

export function sourceOf(header: string | undefined): 'webhook' | 'replay' | 'simulate' {
  const value = header?.trim().toLowerCase();
  return value === 'replay' || value === 'simulate' ? value : 'webhook';
}

/**
 * A request's receipt, before its outcome is known: the route's for refusals, the intake's for commits, which keeps the
 * bytes and query given in `kept`. One object literal, not a spread with more properties after it, which costs about
 * 0.5 µs a property on Node 20 (docs/performance.md).
 */
export function receiptOf(
  { hook, receivedAt, method, contentType, source }: RequestHead,
  size: number,
  kept?: Pick<Receipt, 'rawBody' | 'query'>,
): Omit<Receipt, 'status' | 'outcome'> {
  return kept
    ? { hook, receivedAt, method, contentType, size, source, rawBody: kept.rawBody, query: kept.query }
    : { hook, receivedAt, method, contentType, size, source };
}

/** For `raw`: the body parsed, so it is UTF-8, except the bytes of an allowed file part. */
const lenientUtf8 = new TextDecoder();

/**
 * The fields of a request, and the request as it is kept in `raw`. Query parameters fill only what the body does
 * not carry (docs/reference.md#receiving); both stay in `raw`. Throws the CallhookError of an unreadable query or body.
 */
export async function requestFields(
  { method, contentType, search, body }: WebhookRequest,
  allowFiles: boolean,
): Promise<{ fields: Record<string, unknown>; raw: RawRequest }> {
  const query = parseQuery(search);
  const parsed = await parseBody(body, contentType ?? undefined, { allowFiles });
  return {
    fields: { ...query, ...parsed.fields },
    raw: { method, content_type: contentType, query, body: parsed.text ?? lenientUtf8.decode(body) },
  };
}
