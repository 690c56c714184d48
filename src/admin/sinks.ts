import { CallhookError } from '../errors.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { DeliveryState } from '../store/outbox.js';
import { isFailing, isPaused, type SinkState } from '../store/sink-state.js';

/**
 * The sinks as an operator sees and steers them (docs/reference.md#what-every-sink-shares): `GET /admin/sinks`, `POST
 * /admin/sinks/<name>/pause|resume`, and `callhook sinks list|pause|resume` through them (docs/reference.md#operating:
 * the running serve's config says which sinks there are, their types and their configured `paused`). A pause is kept in
 * the store, so it survives a restart and holds for every replica on PostgreSQL; everything listed is read from the few
 * rows the store keeps per sink (delivery_counts, sink_state), never from a scan of the deliveries.
 */

/** A configured sink, as the running serve knows it. */
export interface ConfiguredSink {
  name: string;
  type: string;
  /** The config's `paused`: it holds while no operator has paused or resumed the sink. */
  pausedByDefault: boolean;
  /** True when it takes test traffic (docs/reference.md#test-traffic); absent, it does not. */
  testTraffic?: boolean;
}

export interface SinksDeps {
  store: AdminQueries;
  sinks: readonly ConfiguredSink[];
  /** Wakes this process's delivery worker after a resume; another replica's looks again within a second. */
  notify?: () => void;
}

/**
 * What a sink is doing now, in one word, the first that holds: paused, waiting out a 429, failing (its last error is
 * newer than its last success), else running. A failure older than the last success is history and makes no sink
 * failing (store/sink-state.ts isFailing).
 */
export type SinkCondition = 'paused' | 'rate_limited' | 'failing' | 'running';

/** One sink in the admin API's words; times are ISO 8601, null when there is none. */
export interface SinkView {
  name: string;
  type: string;
  state: SinkCondition;
  paused: boolean;
  /** Who decided `paused`: an operator (kept in the store) or the config. */
  paused_by: 'operator' | 'config';
  /** When an operator last paused or resumed it. */
  paused_changed_at: string | null;
  /** While a 429 holds every delivery of the sink: until when (docs/reference.md#what-every-sink-shares). */
  rate_limited_until: string | null;
  deliveries: Record<DeliveryState, number>;
  oldest_pending_age_seconds: number;
  last_success_at: string | null;
  /** Why the sink's last failed attempt, or its opening at start-up, failed: history once a success came after it. */
  last_error: string | null;
  last_error_at: string | null;
  /** Whether `last_error` is newer than `last_success_at`: the sink fails now, rather than failed once. */
  failing: boolean;
}

const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());

export async function listSinks({ store, sinks }: SinksDeps): Promise<SinkView[]> {
  const [stats, states] = await Promise.all([store.deliveryStats(), store.sinkStates()]);
  const now = Date.now();
  const stateOf = new Map(states.map((s) => [s.sink, s]));
  return sinks.map((sink) => {
    const deliveries: Record<DeliveryState, number> = { pending: 0, in_flight: 0, done: 0, dead: 0 };
    let oldest: number | null = null;
    for (const stat of stats) {
      if (stat.sink !== sink.name) continue;
      deliveries[stat.state] = stat.count;
      if (stat.state === 'pending') oldest = stat.oldestCreatedAt;
    }
    return view(
      sink,
      stateOf.get(sink.name),
      deliveries,
      oldest === null ? 0 : Math.max(0, (now - oldest) / 1000),
      now,
    );
  });
}

/** Pauses (true) or resumes (false) a configured sink for every replica, and answers with what it is now. */
export async function pauseSink(deps: SinksDeps, name: string, paused: boolean): Promise<SinkView> {
  if (!deps.sinks.some((s) => s.name === name)) {
    throw new CallhookError(
      'NOT_FOUND',
      `no sink is named ${name} (sinks: ${deps.sinks.map((s) => s.name).join(', ')})`,
    );
  }
  await deps.store.setSinkPaused(name, paused);
  // Read before the worker is woken: a resume answers with what was waiting, not with whatever the worker has
  // claimed in the meantime (it raced the reply, which then said "0 pending" for deliveries about to go).
  const now = (await listSinks(deps)).find((s) => s.name === name)!;
  if (!paused) deps.notify?.();
  return now;
}

/** The operations with their deps bound, for a caller that holds one set of deps (the admin API, the dashboard). */
export function sinkOperations(deps: SinksDeps) {
  return {
    listSinks: () => listSinks(deps),
    pauseSink: (name: string, paused: boolean) => pauseSink(deps, name, paused),
  };
}

export type SinkOperations = ReturnType<typeof sinkOperations>;

function view(
  sink: ConfiguredSink,
  state: SinkState | undefined,
  deliveries: Record<DeliveryState, number>,
  oldestAge: number,
  now: number,
): SinkView {
  const until = state?.pausedUntil;
  const paused = isPaused(state, sink.pausedByDefault);
  const rateLimited = until != null && until > now;
  const failing = isFailing(state);
  return {
    name: sink.name,
    type: sink.type,
    state: paused ? 'paused' : rateLimited ? 'rate_limited' : failing ? 'failing' : 'running',
    paused,
    paused_by: state?.paused == null ? 'config' : 'operator',
    paused_changed_at: iso(state?.pausedChangedAt),
    rate_limited_until: rateLimited ? iso(until) : null,
    deliveries,
    oldest_pending_age_seconds: Math.round(oldestAge * 1000) / 1000,
    last_success_at: iso(state?.lastSuccessAt),
    last_error: state?.lastError ?? null,
    last_error_at: iso(state?.lastErrorAt),
    failing,
  };
}
