import type { CallRecord, Problem } from '../record.js';

/**
 * What an in-call hook answers by default (spec 6.1: the AI invokes it during the conversation for a real-time
 * lookup): the caller's earlier calls, by phone number, in a shape the AI can read aloud from.
 */

export interface CallerHistory {
  phone_number: string | null;
  count: number;
  last_call_date: string | null;
  last_outcome: string | null;
  last_sentiment: string | null;
  last_summary: string | null;
  open_order_ids: string[];
  calls: HistoryCall[];
  /** Present when the request did not name a usable phone number. */
  problems?: Problem[];
}

export interface HistoryCall {
  id: string;
  received_at: string;
  call_date: string | null;
  outcome: string | null;
  sentiment: string | null;
  summary: string | null;
  order_id: string | null;
}

/** Calls listed in the reply; the rest are counted, and read for open orders. */
export const LISTED_CALLS = 5;
/** How many of the newest calls are read for open orders: an order older than that is not "open" to anyone. */
export const HISTORY_CALLS = 50;

/**
 * The open-order rule: `open_order_ids` are the distinct non-empty `order_id`s of the caller's calls, newest first,
 * less each order whose newest call has an outcome that closes it — one matching this pattern ("Order cancelled",
 * "delivered", "refund issued", "returned", "completed"). A later "callback requested" about a cancelled order
 * reopens it, since the newest word on an order is the one the AI should act on. The spec defines no outcome
 * values (6.4 gives "order placed, not interested, callback requested" as examples), so the words are matched.
 */
const CLOSED_ORDER = /cancel|deliver|refund|return|complete/i;

export function callerHistory(
  phone: string | null,
  count: number,
  newestFirst: readonly CallRecord[],
  problems: Problem[] = [],
): CallerHistory {
  const text = (record: CallRecord, field: string): string | null => {
    const value = record.data[field] ?? record.extra[field];
    return value === undefined || value === null || String(value).trim() === '' ? null : String(value);
  };
  const calls = newestFirst.map((r) => ({
    id: r.id,
    received_at: r.received_at,
    call_date: text(r, 'call_date'),
    outcome: text(r, 'call_outcome'),
    sentiment: text(r, 'sentiment_analysis'),
    summary: text(r, 'call_summary'),
    order_id: text(r, 'order_id'),
  }));
  const decided = new Set<string>();
  const open: string[] = [];
  for (const call of calls) {
    if (call.order_id === null || decided.has(call.order_id)) continue;
    decided.add(call.order_id);
    if (!CLOSED_ORDER.test(call.outcome ?? '')) open.push(call.order_id);
  }
  const last = calls[0];
  return {
    phone_number: phone,
    count,
    last_call_date: last ? (last.call_date ?? last.received_at.slice(0, 10)) : null,
    last_outcome: last?.outcome ?? null,
    last_sentiment: last?.sentiment ?? null,
    last_summary: last?.summary ?? null,
    open_order_ids: open,
    calls: calls.slice(0, LISTED_CALLS),
    ...(problems.length > 0 && { problems }),
  };
}
