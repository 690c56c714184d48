import type { Logger } from 'pino';

/**
 * Logs a store outage once, not once a request. At 500 calls a second a full disk or a PostgreSQL that is down
 * would otherwise write a thousand error lines a second, stacks and all, often to a log on that same full disk.
 * The first failure is logged whole; while the outage lasts, at most one line every `everyMs` counts what was
 * refused since; the first success after it says how long it lasted and what it cost. The replies and the
 * `callhook_requests_total{outcome="503"}` counter still see every request.
 */

export interface OutageLogOptions {
  everyMs?: number;
  now?: () => number;
}

export interface StoreOutageLog {
  /** A call, or a receipt (of a refused request, of an in-call answer), could not be committed. */
  failed(err: unknown, what: { hook: string; receipt?: boolean }): void;
  /** Something was committed: an outage under way is over. Bound, so it can be passed as a callback. */
  committed(): void;
}

/** The commits of calls and receipts. */
export function storeOutageLog(log: Logger, options: OutageLogOptions = {}): StoreOutageLog {
  const outage = outageLog(
    log,
    {
      still: 'the store still cannot commit',
      over: 'the store commits again',
      counts: ['refusedCalls', 'lostReceipts'],
    },
    options,
  );
  return {
    failed: (err, { hook, receipt = false }) =>
      receipt
        ? outage.failed(err, 'lostReceipts', { hook }, 'cannot store a receipt')
        : outage.failed(
            err,
            'refusedCalls',
            { hook },
            'cannot commit a call; calls are refused with 503 until the store commits again',
          ),
    committed: outage.over,
  };
}

export interface HistoryOutageLog {
  /** An in-call hook could not read the caller history, and answered 503. */
  failed(err: unknown, hook: string): void;
  /** A caller history was read: an outage under way is over. */
  read(): void;
}

/** The in-call hooks' reads of the caller history: a store that cannot answer them is an outage of its own. */
export function historyOutageLog(log: Logger, options: OutageLogOptions = {}): HistoryOutageLog {
  const outage = outageLog(
    log,
    {
      still: 'the store still cannot read the caller history',
      over: 'the store reads the caller history again',
      counts: ['refusedLookups'],
    },
    options,
  );
  return {
    failed: (err, hook) =>
      outage.failed(
        err,
        'refusedLookups',
        { hook },
        'cannot read the caller history; in-call hooks answer 503 until the store reads again',
      ),
    read: outage.over,
  };
}

interface Words<K extends string> {
  /** The line every `everyMs` while the outage lasts. */
  still: string;
  /** The line when it is over. */
  over: string;
  /** What is counted, each a field of those two lines. */
  counts: readonly K[];
}

function outageLog<K extends string>(
  log: Logger,
  { still, over, counts }: Words<K>,
  { everyMs = 10_000, now = Date.now }: OutageLogOptions,
) {
  const none = (): Record<string, number> => Object.fromEntries(counts.map((count) => [count, 0]));
  let since: number | undefined;
  let lastLine = 0;
  let recent = none();
  let total = none();

  return {
    failed(err: unknown, count: K, fields: Record<string, unknown>, first: string): void {
      const at = now();
      recent[count] = (recent[count] ?? 0) + 1;
      total[count] = (total[count] ?? 0) + 1;
      if (since === undefined) {
        // The first line covers its own failure; the counts start after it.
        since = lastLine = at;
        recent = none();
        log.error({ err, ...fields }, first);
        return;
      }
      if (at - lastLine < everyMs) return;
      const { message, code } = err as { message?: unknown; code?: unknown };
      log.error({ error: String(message ?? err), code, ...recent, seconds: Math.round((at - since) / 1000) }, still);
      lastLine = at;
      recent = none();
    },
    over(): void {
      if (since === undefined) return;
      log.warn({ seconds: Math.round((now() - since) / 1000), ...total }, over);
      since = undefined;
      total = none();
    },
  };
}
