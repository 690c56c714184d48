/**
 * Sheds repeated failed authentication from one address. Keys are 192 random bits, so guessing is not the threat;
 * a client hammering with a wrong key is noise, log volume and CPU. After `max` failures within `windowMs`, a
 * request from that address without a valid key is answered 429 with Retry-After until the window ends. A request
 * WITH a valid key is never refused, so the sender's traffic is untouched even behind a shared address.
 */

export interface AuthLimiter {
  /** Milliseconds until the address may fail again without a 429; 0 when it is not limited. */
  retryAfterMs(address: string): number;
  /** Counts one failed authentication. */
  fail(address: string): void;
}

export interface AuthLimiterOptions {
  max?: number;
  windowMs?: number;
  /** Addresses tracked at most; the oldest is forgotten first, so a flood of addresses cannot grow memory. */
  capacity?: number;
  now?: () => number;
}

export function createAuthLimiter({
  max = 20,
  windowMs = 60_000,
  capacity = 10_000,
  now = Date.now,
}: AuthLimiterOptions = {}): AuthLimiter {
  const windows = new Map<string, { start: number; failures: number }>();

  const current = (address: string) => {
    const entry = windows.get(address);
    if (entry && now() - entry.start < windowMs) return entry;
    if (entry) windows.delete(address);
    return undefined;
  };

  return {
    retryAfterMs(address) {
      const entry = current(address);
      return entry && entry.failures >= max ? entry.start + windowMs - now() : 0;
    },
    fail(address) {
      const entry = current(address);
      if (entry) {
        entry.failures++;
        return;
      }
      if (windows.size >= capacity) windows.delete(windows.keys().next().value!);
      windows.set(address, { start: now(), failures: 1 });
    },
  };
}
