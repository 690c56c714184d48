import type { Logger } from 'pino';
import type { AdminQueries } from '../store/admin-queries.js';
import type { IncidentRecord, IncidentStore } from '../store/incidents.js';
import type { Maintenance } from '../store/maintenance.js';
import type { RulesConfig } from './config.js';
import { createEventRules } from './event-rules.js';
import { type CallsSeen, createOpenIncidents, type RuleContext, type Warn } from './open-incidents.js';
import type { AlertSender } from './sender.js';
import { createStoreOutage } from './store-outage.js';
import { createTimerRules } from './timer-rules.js';

/**
 * The alert rules (docs/reference.md#alerts), evaluated at their events and on a timer of a few seconds, from what the
 * store already counts (the delivery counts, the sinks' state, the held calls) and from counters in memory. An
 * occurrence opens an incident in the store, or counts in the one open for its rule and key; a rule whose condition
 * is over resolves it. Messages go out through the store's outbox (sender.ts), but `store_outage`'s opening, which
 * cannot wait for the store: it is sent from memory, and kept once a commit succeeds again.
 *
 * A call's path costs a counter or two (`arrived`, `committed`): everything else happens on the timer.
 *
 * This file assembles them and runs the timer; the parts: open-incidents.ts (opens, counts and resolves, and what the
 * rules share), event-rules.ts (the rules at their events), timer-rules.ts (the rules on the timer),
 * problem-window.ts (`problem_rate`'s window), store-outage.ts (`store_outage`, from memory).
 */

/** What the webhook route, the delivery worker and the intake tell the rules. */
export interface AlertEvents {
  /** A request to an end-of-call hook was refused for its key (401 or 429). */
  wrongKey(hook: string): void;
  /** A call of the hook was stored: `problems` says whether it carries any; undefined for a repeat of a stored call. */
  arrived(hook: string, problems: boolean | undefined): void;
  /** A call could not be committed, and was refused with 503. */
  commitFailed(): void;
  /** A call was committed. */
  committed(): void;
  /** A delivery to the sink went dead. */
  deliveryDead(sink: string): void;
}

/** When no channel is configured, no rule is on, and every event costs nothing. */
export const NO_ALERTS: AlertEvents = {
  wrongKey: () => undefined,
  arrived: () => undefined,
  commitFailed: () => undefined,
  committed: () => undefined,
  deliveryDead: () => undefined,
};

export interface Monitor extends AlertEvents {
  start(): void;
  /** One evaluation of every rule now (the timer's; tests call it). */
  tick(): Promise<void>;
  /** Whether this process is in a store outage (for /metrics, which cannot read the store then). */
  inStoreOutage(): boolean;
  stop(): Promise<void>;
}

export interface MonitorDeps {
  rules: RulesConfig;
  /** The channels' names: each incident's messages go to every one. */
  channels: readonly string[];
  store: IncidentStore & Pick<AdminQueries, 'deliveryStats' | 'sinkStates'> & Pick<Maintenance, 'ping'>;
  sender: Pick<AlertSender, 'notify' | 'sendNow'>;
  log: Logger;
  /** The end-of-call hooks: the ones calls arrive at. */
  hooks: readonly string[];
  sinks: readonly { name: string; pausedByDefault: boolean }[];
  timezone: string;
  everyMs: number;
  now?: () => number;
}

/** More than this many open incidents at once are read a page at a time by no one: the rest wait for a resolve. */
const OPEN_READ = 1000;

export function createMonitor({
  rules,
  channels,
  store,
  sender,
  log,
  hooks,
  sinks,
  timezone,
  everyMs,
  now = Date.now,
}: MonitorDeps): Monitor {
  const warn: Warn = (err, what, fields = {}) => log.warn({ err, ...fields }, `alerts: ${what}`);
  const incidents = createOpenIncidents({ rules, channels, store, sender, log, warn, now });
  // In memory: the last call of each hook, the recent calls with problems.
  const seen: CallsSeen = { lastCall: new Map(), hasHadCalls: new Set(), slices: new Map() };
  const context: RuleContext = { rules, store, incidents, seen, warn, now };
  const outage = createStoreOutage({ rules, channels, store, sender, log, warn, now });
  const events: AlertEvents = {
    ...createEventRules(context, hooks),
    commitFailed: outage.commitFailed,
    committed: outage.committed,
  };
  const evaluations = createTimerRules(context, { hooks, sinks, timezone });

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const tick = async () => {
    await outage.tick();
    let open: IncidentRecord[];
    try {
      open = await store.listIncidents({ state: 'open', limit: OPEN_READ });
    } catch (err) {
      log.debug({ err }, 'alerts: cannot read the open incidents');
      return;
    }
    incidents.reread(open);
    await incidents.flushPending((err) => warn(err, 'cannot count in an incident; trying again'));
    for (const [rule, evaluate] of Object.entries(evaluations))
      await evaluate().catch((err: unknown) => warn(err, `cannot evaluate ${rule}`));
  };

  return {
    ...events,
    tick: () => (running ??= tick().finally(() => (running = undefined))),
    start() {
      timer ??= setInterval(() => void (running ??= tick().finally(() => (running = undefined))), everyMs);
      timer.unref();
      running ??= tick().finally(() => (running = undefined));
    },
    inStoreOutage: outage.active,
    async stop() {
      clearInterval(timer);
      await running;
      await incidents.flushPending(() => undefined);
    },
  };
}
