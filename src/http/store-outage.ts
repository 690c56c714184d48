import type { Logger } from 'pino';

/**
 * Logs a store outage once, not once a request. At 500 calls a second a full disk or a PostgreSQL that is down
 * would otherwise write a thousand error lines a second, stacks and all, often to a log on that same full disk.
 * The first failure is logged whole; while the outage lasts, at most one line every `everyMs` counts what was
 * refused since; the first commit after it says how long it lasted and what it cost. The replies and the
 * `callhook_requests_total{outcome="503"}` counter still see every request.
 */

export interface StoreOutageLog {
  /** A call, or a receipt (of a refused request, of an in-call answer), could not be committed. */
  failed(err: unknown, what: { hook: string; receipt?: boolean }): void;
  /** Something was committed: an outage under way is over. Bound, so it can be passed as a callback. */
  committed(): void;
}

export function storeOutageLog(log: Logger, { everyMs = 10_000, now = Date.now }: { everyMs?: number; now?: () => number } = {}): StoreOutageLog {
  let since: number | undefined;
  let lastLine = 0;
  // Since the last line, and since the start.
  let calls = 0;
  let receipts = 0;
  let totalCalls = 0;
  let totalReceipts = 0;

  return {
    failed(err, { hook, receipt = false }) {
      const at = now();
      if (receipt) {
        receipts++;
        totalReceipts++;
      } else {
        calls++;
        totalCalls++;
      }
      if (since === undefined) {
        since = lastLine = at;
        calls = receipts = 0;
        log.error({ err, hook }, receipt ? 'cannot store a receipt' : 'cannot commit a call; calls are refused with 503 until the store commits again');
        return;
      }
      if (at - lastLine < everyMs) return;
      const { message, code } = err as { message?: unknown; code?: unknown };
      log.error({ error: String(message ?? err), code, refusedCalls: calls, lostReceipts: receipts, seconds: Math.round((at - since) / 1000) }, 'the store still cannot commit');
      lastLine = at;
      calls = receipts = 0;
    },
    committed() {
      if (since === undefined) return;
      log.warn({ seconds: Math.round((now() - since) / 1000), refusedCalls: totalCalls, lostReceipts: totalReceipts }, 'the store commits again');
      since = undefined;
      totalCalls = totalReceipts = 0;
    },
  };
}
