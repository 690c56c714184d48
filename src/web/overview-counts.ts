import type { Scalar } from '../record.js';
import type { AdminQueries } from '../store/admin-queries.js';

/**
 * What the overview counts (docs/reference.md#dashboard): the calls received in the last 24 hours and 7 days by outcome
 * and by sentiment, and the requests by what became of them, test traffic left out of both
 * (docs/reference.md#test-traffic: a replay of fixtures/ is no call of the operator's). The store keeps no such counts, so they are read
 * from its pages of calls and receipts, newest first, up to `cap` of each: past that the page says the figures
 * cover the newest `cap` (the last 24 hours come first, so they are whole longest). What is counted is kept for
 * `ttlMs`, so an operator who reloads the page does not read the store again each time.
 */

export interface WindowCounts {
  outcomes: string[];
  sentiments: string[];
  /** Receipts by outcome; `refused` is a refused request after the key check (a 4xx), `failed` one refused with 5xx. */
  requests: Record<'accepted' | 'duplicate' | 'held' | 'refused' | 'failed', number>;
}

export interface OverviewCounts {
  day: WindowCounts;
  week: WindowCounts;
  /** True when the week had more calls or receipts than were counted. */
  capped: boolean;
  cap: number;
  countedAt: number;
}

const PAGE = 500;

/** The pages it reads. */
type OverviewStore = Pick<AdminQueries, 'listCalls' | 'listReceiptPage'>;

export function overviewCounter(
  store: OverviewStore,
  { cap = 20_000, ttlMs = 15_000, now = Date.now } = {},
): () => Promise<OverviewCounts> {
  let kept: { at: number; counts: Promise<OverviewCounts> } | undefined;
  return () => {
    const t = now();
    if (!kept || t - kept.at > ttlMs) {
      const counts = count(store, cap, t);
      kept = { at: t, counts };
      counts.catch(() => (kept = undefined));
    }
    return kept.counts;
  };
}

const emptyWindow = (): WindowCounts => ({
  outcomes: [],
  sentiments: [],
  requests: { accepted: 0, duplicate: 0, held: 0, refused: 0, failed: 0 },
});
const text = (value: Scalar | undefined) => (value === undefined ? undefined : String(value));

async function count(store: OverviewStore, cap: number, now: number): Promise<OverviewCounts> {
  const weekStart = new Date(now - 7 * 86_400_000).toISOString();
  const dayStart = new Date(now - 86_400_000).toISOString();
  const day = emptyWindow();
  const week = emptyWindow();
  let capped = false;

  let calls = 0;
  for (let after: string | undefined; ; ) {
    const page = await store.listCalls({ from: weekStart, hideTest: true, order: 'desc', limit: PAGE, after });
    for (const { record } of page) {
      for (const window of record.received_at >= dayStart ? [day, week] : [week]) {
        window.outcomes.push(text(record.data.call_outcome) ?? '');
        window.sentiments.push(text(record.data.sentiment_analysis) ?? '');
      }
    }
    calls += page.length;
    if (page.length < PAGE) break;
    if (calls >= cap) {
      capped = true;
      break;
    }
    after = page.at(-1)!.record.id;
  }

  let receipts = 0;
  for (let after: number | undefined; ; ) {
    const page = await store.listReceiptPage({ from: weekStart, hideTest: true, order: 'desc', limit: PAGE, after });
    for (const receipt of page) {
      const kind = receipt.outcome === 'rejected' ? (receipt.status < 500 ? 'refused' : 'failed') : receipt.outcome;
      if (kind === 'in-call' || kind === 'ignored') continue;
      for (const window of receipt.receivedAt >= dayStart ? [day, week] : [week]) window.requests[kind]++;
    }
    receipts += page.length;
    if (page.length < PAGE) break;
    if (receipts >= cap) {
      capped = true;
      break;
    }
    after = page.at(-1)!.id;
  }
  return { day, week, capped, cap, countedAt: now };
}
