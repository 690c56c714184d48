/**
 * The sender gives up after 10 s and never retries (spec section 6.1), so a reply must leave in time even when the
 * store hangs: a PostgreSQL behind a network that drops packets answers nothing, for minutes, and a pool whose
 * connections all wait on it hands out none. Past the deadline the route answers 503. The work itself goes on; if
 * it commits after all, the call is stored and delivered like any other (at least once, never a 200 without it).
 */

/**
 * The default of the config's `store_deadline` (docs/reference.md#configuration-keys): the sender's 10 s, less the
 * time a reply takes to reach it (the body read before, the network and a slow client after). A 503 loses the call
 * for certain, so a commit is waited for as long as its reply can still arrive: in a storm of thousands of calls,
 * commits take 5 to 8 s and still make it.
 */
export const STORE_DEADLINE_MS = 8_000;

/**
 * The longest a store probe runs for a reader who is not the sender: `/readyz` (docs/reference.md#health), whose
 * caller, a load balancer or an orchestrator, gives up sooner, and the dashboard's overview.
 */
export const STORE_PROBE_MS = 5_000;

export function withinDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    // Settling twice is a no-op: a late rejection of the work is absorbed here, never unhandled.
    work.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
