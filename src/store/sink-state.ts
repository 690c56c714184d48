/**
 * What both stores keep of a sink besides its deliveries (docs/reference.md#queues-and-databases), and how they read
 * it: one row a sink, written by the worker in the same write as the attempt it records, so `GET /admin/sinks` and
 * `/metrics` read a few rows whatever the store holds, and a pause is seen by every replica's claim.
 */

/** One sink's kept state (docs/reference.md#queues-and-databases), epoch milliseconds. */
export interface SinkState {
  sink: string;
  /**
   * An operator's last word: paused (true) or resumed (false); null when none was ever given, and the config decides.
   */
  paused: boolean | null;
  /** When an operator last paused or resumed it. */
  pausedChangedAt: number | null;
  /** A 429 holds every delivery of the sink until then. */
  pausedUntil: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
}

/**
 * A sink's last success is written at most once a second: at thousands of attempts a second, every finished
 * attempt of a sink would otherwise update one row, on PostgreSQL one row that every replica's finishes lock in
 * turn. A reader of `last_success_at` loses at most a second; a failure is always written, with its text, and so is
 * the first success after a failure, whenever it comes: held back, it would leave the failure the newer of the two,
 * and the sink said to be failing while it delivers (isFailing).
 */
export const SUCCESS_EVERY_MS = 1_000;

/**
 * Whether the sink's last word is a failure: an error (a failed attempt, or the sink not opening) newer than its last
 * success. A failure older than the last success is history (docs/reference.md#what-every-sink-shares): it is still
 * shown, as what happened, but nothing calls the sink failing for it.
 */
export function isFailing(state: Pick<SinkState, 'lastErrorAt' | 'lastSuccessAt'> | undefined): boolean {
  if (state?.lastErrorAt == null) return false;
  return state.lastSuccessAt == null || state.lastErrorAt > state.lastSuccessAt;
}

/** Whether the operator's word, or the config's `paused` when there is none (the stored state wins), pauses it. */
export function isPaused(state: Pick<SinkState, 'paused'> | undefined, pausedByDefault: boolean): boolean {
  return state?.paused ?? pausedByDefault;
}

/**
 * Until when the sink's deliveries wait: Infinity while paused, the end of a 429's wait while it lasts, else
 * undefined (nothing holds them).
 */
export function heldUntil(
  state: Pick<SinkState, 'paused' | 'pausedUntil'> | undefined,
  pausedByDefault: boolean,
  now: number,
): number | undefined {
  if (isPaused(state, pausedByDefault)) return Infinity;
  const until = state?.pausedUntil;
  return until != null && until > now ? until : undefined;
}

/** Stored flags come back as 0/1 from SQLite and as booleans from PostgreSQL. */
export function sinkStateOf(
  row: { [K in keyof SinkState]: K extends 'paused' ? boolean | number | null : SinkState[K] },
): SinkState {
  return { ...row, paused: row.paused === null ? null : Boolean(row.paused) };
}
