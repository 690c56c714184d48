import type { RatePolicy } from '../sinks/policy.js';

/**
 * A sink's `rate` (docs/reference.md#what-every-sink-shares): at most `max` deliveries start in ANY window of `perMs`,
 * in one process. A sliding log of the last `max` start times, not p-queue's `intervalCap`: p-queue counts in fixed
 * intervals that start where its timer does, so `max` starts at the end of one interval and `max` more at the start of
 * the next put 2 × max inside one window of that length, past the limit a CRM documents.
 *
 * The window kept is a little longer than `per` (arrivalMargin): a service counts requests as they arrive, and
 * the first requests of a window, which open connections, arrive later after their start than the next window's,
 * which reuse them; without the margin, the first of the next window can land inside the service's window.
 */

/** 1/50th of the window, at least 50 ms and at most a second. */
export function arrivalMargin(perMs: number): number {
  return Math.min(1_000, Math.max(50, Math.round(perMs / 50)));
}

export interface RateWindow {
  /** How many deliveries may start now. */
  available(now?: number): number;
  /** Milliseconds until one more may start: 0 when one may now. */
  nextIn(now?: number): number;
  /** `count` deliveries started at `now`. */
  started(count: number, now?: number): void;
}

export function rateWindow({ max, perMs }: RatePolicy, marginMs = arrivalMargin(perMs)): RateWindow {
  const windowMs = perMs + marginMs;
  /** Start times within the last window, oldest first; never more than `max`. */
  const starts: number[] = [];
  const forget = (now: number) => {
    let old = 0;
    while (old < starts.length && now - starts[old]! >= windowMs) old++;
    if (old > 0) starts.splice(0, old);
  };
  return {
    available(now = Date.now()) {
      forget(now);
      return max - starts.length;
    },
    nextIn(now = Date.now()) {
      forget(now);
      return starts.length < max ? 0 : starts[0]! + windowMs - now;
    },
    started(count, now = Date.now()) {
      for (let i = 0; i < count; i++) starts.push(now);
      // A caller that started more than it was allowed keeps only the newest `max`, the ones that bind.
      if (starts.length > max) starts.splice(0, starts.length - max);
    },
  };
}
