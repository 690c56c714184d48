import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { RULE_NAMES } from './alerts/config.js';
import type { AttemptEvent } from './delivery/worker.js';
import type { AdminQueries } from './store/admin-queries.js';
import type { IncidentStore } from './store/incidents.js';
import type { DeliveryState } from './store/outbox.js';
import { isPaused } from './store/sink-state.js';

/**
 * `/metrics` in Prometheus text (docs/reference.md#metrics). Request and attempt figures are counted as they happen;
 * outbox figures are read from the store at scrape time, so every replica reports the shared truth.
 * Labels hold only configured names (hooks, sinks) and fixed words, never what a client sent.
 */

export interface Metrics {
  /** The Prometheus text of every metric, outbox figures read now. */
  render(): Promise<{ contentType: string; body: string }>;
  observeRequest(hook: string, outcome: string, seconds: number): void;
  observeAttempt(event: AttemptEvent): void;
}

const STATES: readonly DeliveryState[] = ['pending', 'in_flight', 'done', 'dead'];

/**
 * More than any config opens at once (eight rules, each once a hook or sink): a read this long is every open incident.
 */
const OPEN_INCIDENTS_READ = 10_000;

export interface MetricsOptions {
  /** The sinks the config pauses (`paused: true`), paused while no operator has paused or resumed them. */
  pausedByDefault?: readonly string[];
}

export function createMetrics(
  store: Pick<AdminQueries, 'deliveryStats' | 'sinkStates'> & Pick<IncidentStore, 'listIncidents'>,
  sinkNames: readonly string[],
  { pausedByDefault = [] }: MetricsOptions = {},
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'callhook_' });

  const requests = new Counter({
    name: 'callhook_requests_total',
    help: 'Webhook requests by hook and outcome (accepted, duplicate, held, or the error status)',
    labelNames: ['hook', 'outcome'],
    registers: [registry],
  });
  const replyDuration = new Histogram({
    name: 'callhook_reply_duration_seconds',
    help: 'Time from request to reply on /webhooks/*, commit included',
    labelNames: ['hook'],
    // The sender gives up at 10 s (spec section 6.3); the interesting part is far below it.
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const attempts = new Counter({
    name: 'callhook_delivery_attempts_total',
    help: 'Delivery attempts by sink and outcome (ok, retry, dead)',
    labelNames: ['sink', 'outcome'],
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'callhook_delivery_attempt_duration_seconds',
    help: 'Duration of delivery attempts by sink',
    labelNames: ['sink'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });

  // docs/reference.md#what-every-sink-shares. A 429's wait is not a pause here: it is counted by the counter, and ends
  // by itself.
  const paused = new Gauge({
    name: 'callhook_sink_paused',
    help: 'Whether a sink is paused (1) or not (0), by an operator or its config',
    labelNames: ['sink'],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'callhook_sink_rate_limited_total',
    help: 'Attempts a sink answered with "too many requests" (HTTP 429), each pausing all its deliveries',
    labelNames: ['sink'],
    registers: [registry],
  });
  for (const sink of sinkNames) rateLimited.inc({ sink }, 0);

  const deliveries = new Gauge({
    name: 'callhook_deliveries',
    help: 'Deliveries by sink and state',
    labelNames: ['sink', 'state'],
    registers: [registry],
  });
  const depth = new Gauge({
    name: 'callhook_outbox_depth',
    help: 'Deliveries pending or in flight',
    registers: [registry],
  });
  const oldest = new Gauge({
    name: 'callhook_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest delivery still pending, by sink (0 when none)',
    labelNames: ['sink'],
    registers: [registry],
  });

  // docs/reference.md#alerts: one series a rule, 0 while none of it is open.
  const incidents = new Gauge({
    name: 'callhook_incidents_open',
    help: 'Open incidents by alert rule',
    labelNames: ['rule'],
    registers: [registry],
  });

  // Refreshed once per scrape rather than per gauge: one store query feeds all three. It reads the counts the store
  // keeps as deliveries change and one index row per sink, so a scrape costs the same whatever the store holds
  // (docs/reference.md#metrics; migration 5 of either store).
  const collect = async () => {
    // One row a sink (sink_state, migration 6) beside the delivery counts: the same cost whatever the store holds. The
    // open incidents are at most one a rule and key (hook or sink), read by the partial index that keeps them so.
    const [stats, states, open] = await Promise.all([
      store.deliveryStats(),
      store.sinkStates(),
      store.listIncidents({ state: 'open', limit: OPEN_INCIDENTS_READ }),
    ]);
    for (const rule of RULE_NAMES) incidents.set({ rule }, open.filter((i) => i.rule === rule).length);
    const stateOf = new Map(states.map((s) => [s.sink, s]));
    for (const sink of sinkNames)
      paused.set({ sink }, isPaused(stateOf.get(sink), pausedByDefault.includes(sink)) ? 1 : 0);
    const now = Date.now();
    deliveries.reset();
    oldest.reset();
    for (const sink of sinkNames) {
      for (const state of STATES) deliveries.set({ sink, state }, 0);
      oldest.set({ sink }, 0);
    }
    let outbox = 0;
    for (const s of stats) {
      deliveries.set({ sink: s.sink, state: s.state }, s.count);
      if (s.state === 'pending' || s.state === 'in_flight') outbox += s.count;
      if (s.state === 'pending' && s.oldestCreatedAt !== null)
        oldest.set({ sink: s.sink }, Math.max(0, (now - s.oldestCreatedAt) / 1000));
    }
    depth.set(outbox);
  };

  return {
    async render() {
      await collect();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    observeRequest(hook, outcome, seconds) {
      requests.inc({ hook, outcome });
      replyDuration.observe({ hook }, seconds);
    },
    observeAttempt({ sink, outcome, durationMs, rateLimited: limited }) {
      attempts.inc({ sink, outcome });
      if (limited) rateLimited.inc({ sink });
      attemptDuration.observe({ sink }, durationMs / 1000);
    },
  };
}
