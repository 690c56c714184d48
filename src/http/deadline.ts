/**
 * The sender gives up after 10 s and never retries (spec section 6.1), so a reply must leave in time even when the
 * store hangs: a PostgreSQL behind a network that drops packets answers nothing, for minutes, and a pool whose
 * connections all wait on it hands out none. Past the deadline the route answers 503. The work itself goes on; if
 * it commits after all, the call is stored and delivered like any other (at least once, never a 200 without it).
 */

/** Well inside the sender's 10 s, with room for reading the body and for a slow client. */
export const STORE_DEADLINE_MS = 5_000;

export function withinDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    // Settling twice is a no-op: a late rejection of the work is absorbed here, never unhandled.
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
