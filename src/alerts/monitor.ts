import type { Logger } from 'pino';
import { newId } from '../ids.js';
import type { AdminQueries } from '../store/admin-queries.js';
import {
  addCounts,
  type IncidentRecord,
  type IncidentStore,
  incidentKey,
  type SentMessage,
} from '../store/incidents.js';
import type { Maintenance } from '../store/maintenance.js';
import { isFailing, isPaused } from '../store/sink-state.js';
import { activeWindowStart, isActive, minuteOfDay } from './active-hours.js';
import type { RuleName, RulesConfig } from './config.js';
import { spanText } from './message.js';
import type { AlertSender } from './sender.js';

/**
 * The alert rules (docs/reference.md#alerts), evaluated at their events and on a timer of a few seconds, from what the
 * store already counts (the delivery counts, the sinks' state, the held calls) and from counters in memory. An
 * occurrence opens an incident in the store, or counts in the one open for its rule and key; a rule whose condition
 * is over resolves it. Messages go out through the store's outbox (sender.ts), but `store_outage`'s opening, which
 * cannot wait for the store: it is sent from memory, and kept once a commit succeeds again.
 *
 * A call's path costs a counter or two (`arrived`, `committed`): everything else happens on the timer.
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
/** A hook's recent calls are counted in this many slices of `problem_rate`'s window. */
const SLICES = 60;
/** Calls committed on another replica reach the store a little after their received_at: look back this far more. */
const SKEW_MS = 60_000;

interface Pending {
  rule: RuleName;
  key: string | null;
  counts: Record<string, number>;
  at: number;
  summary: string;
}

interface Outage {
  id: string;
  since: number;
  last: number;
  refused: number;
  ended?: number;
  /** The opening, sent from memory: how it went on each channel. */
  sent: Promise<SentMessage[]>;
}

/** A hook's calls and calls with problems, in slices of time (`problem_rate`). */
interface Slices {
  index: number[];
  calls: number[];
  problems: number[];
}

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
  const iso = (ms: number) => new Date(ms).toISOString();
  /** The open incidents by rule and key: read at each tick, kept by this process's own opens and resolves between. */
  const open = new Map<string, IncidentRecord>();
  const opening = new Set<string>();
  const resolving = new Set<string>();
  /** Occurrences not yet written: counts of open incidents, and openings the store could not take. */
  const pending = new Map<string, Pending>();
  const watched = new Set(hooks);

  // In memory: the last call of each hook, the wrong keys of the last `per`, the recent calls with problems.
  const lastCall = new Map<string, number>();
  const hasHadCalls = new Set<string>();
  const wrongKeys = new Map<string, number[]>();
  const lookedUp = new Set<string>();
  const slices = new Map<string, Slices>();
  /** The last time each hook's no_calls incident was checked against the store, for a call another replica took. */
  const checkedAt = new Map<string, number>();

  let outage: Outage | undefined;
  const unrecorded: Outage[] = [];

  const warn = (err: unknown, what: string, fields: Record<string, unknown> = {}) =>
    log.warn({ err, ...fields }, `alerts: ${what}`);

  const remember = (p: Pending) => {
    const k = incidentKey(p.rule, p.key);
    const before = pending.get(k);
    pending.set(k, before ? { ...p, counts: addCounts(before.counts, p.counts), summary: before.summary } : p);
  };

  /** An occurrence: opens the rule's incident for the key, or counts in the open one. */
  const occur = (rule: RuleName, key: string | null, counts: Record<string, number>, summary: string) => {
    if (rules[rule] === false) return;
    const k = incidentKey(rule, key);
    const at = now();
    if (open.has(k) || opening.has(k)) return remember({ rule, key, counts, at, summary });
    opening.add(k);
    store
      .openIncident({ id: newId(at), rule, key, at: iso(at), counts, summary, channels })
      .then(({ incident, opened }) => {
        open.set(k, incident);
        if (!opened) return;
        log.warn({ incident: incident.id, rule, key, counts }, `alerts: incident opened: ${summary}`);
        sender.notify();
      })
      .catch((err: unknown) => {
        warn(err, 'cannot open an incident; trying again at the next evaluation', { rule, key });
        remember({ rule, key, counts, at, summary });
      })
      .finally(() => opening.delete(k));
  };

  const resolve = async (rule: RuleName, key: string | null) => {
    const k = incidentKey(rule, key);
    if (!open.has(k) || resolving.has(k)) return;
    resolving.add(k);
    try {
      await flushOne(k);
      const incident = await store.resolveIncident(rule, key, iso(now()), channels);
      open.delete(k);
      pending.delete(k);
      if (!incident) return;
      const lasted = spanText(Date.parse(incident.resolvedAt!) - Date.parse(incident.openedAt));
      log.info(
        { incident: incident.id, rule, key, counts: incident.counts },
        `alerts: incident resolved after ${lasted}`,
      );
      sender.notify();
    } catch (err) {
      warn(err, 'cannot resolve an incident; trying again at the next evaluation', { rule, key });
    } finally {
      resolving.delete(k);
    }
  };

  /** Writes what was counted of one incident: in the open one, or as a new one when it is not open any more. */
  const flushOne = async (k: string) => {
    const p = pending.get(k);
    if (!p || opening.has(k)) return;
    pending.delete(k);
    try {
      const counted = open.has(k) && (await store.countIncident(p.rule, p.key, p.counts, iso(p.at)));
      if (counted) {
        const incident = open.get(k);
        if (incident)
          open.set(k, { ...incident, counts: addCounts(incident.counts, p.counts), lastEventAt: iso(p.at) });
      } else {
        open.delete(k);
        occur(p.rule, p.key, p.counts, p.summary);
      }
    } catch (err) {
      remember(p);
      throw err;
    }
  };

  const openOf = (rule: RuleName) => [...open.values()].filter((incident) => incident.rule === rule);
  const isOpen = (rule: RuleName, key: string | null) => open.has(incidentKey(rule, key));

  // --- store_outage: from memory, as the store cannot be asked -------------------------------------------------

  const recordOutage = async (o: Outage) => {
    const incident: IncidentRecord = {
      id: o.id,
      rule: 'store_outage',
      key: null,
      openedAt: iso(o.since),
      lastEventAt: iso(o.last),
      acknowledgedAt: null,
      acknowledgedBy: null,
      resolvedAt: iso(o.ended!),
      counts: { refused: o.refused },
      summary: outageSummary(),
    };
    await store.recordIncident(incident, { kind: 'resolved', channels }, await o.sent);
    unrecorded.splice(unrecorded.indexOf(o), 1);
    log.info(
      { incident: o.id, refused: o.refused },
      `alerts: the store commits again after ${spanText(o.ended! - o.since)}`,
    );
    sender.notify();
  };

  const endOutage = () => {
    const o = outage!;
    outage = undefined;
    o.ended = now();
    unrecorded.push(o);
    recordOutage(o).catch((err: unknown) => warn(err, 'cannot keep the store outage yet; trying again'));
  };

  // --- the rules at their events ----------------------------------------------------------------------------------

  const events: AlertEvents = {
    wrongKey(hook) {
      const rule = rules.auth_failures;
      if (rule === false || !watched.has(hook)) return;
      const at = now();
      if (isOpen('auth_failures', hook)) return remember(authOccurrence(hook, 1, at));
      const times = wrongKeys.get(hook) ?? [];
      times.push(at);
      if (times.length > rule.max) times.shift();
      wrongKeys.set(hook, times);
      if (times.length >= rule.max && at - times[0]! <= rule.per) {
        wrongKeys.delete(hook);
        const p = authOccurrence(hook, times.length, at);
        return occur(
          p.rule,
          p.key,
          p.counts,
          `${times.length} requests with a wrong key on hook "${hook}" within ${spanText(rule.per)}`,
        );
      }
      if (rule.after_success <= 0) return;
      const afterAccepted = (last: number) => {
        if (at - last >= rule.after_success) return;
        occur('auth_failures', hook, { refused: 1 }, rotatedKeySummary(hook, at - last));
      };
      const last = lastCall.get(hook);
      if (last !== undefined) return afterAccepted(last);
      if (lookedUp.has(hook)) return;
      // After a restart memory knows no call yet: the store does, once a hook.
      lookedUp.add(hook);
      store
        .lastCallSince(hook, iso(at - rule.after_success))
        .then((found) => {
          if (found === undefined) return;
          lastCall.set(hook, Math.max(lastCall.get(hook) ?? 0, Date.parse(found)));
          afterAccepted(Date.parse(found));
        })
        .catch((err: unknown) => warn(err, 'cannot read a hook’s last call', { hook }));
    },

    arrived(hook, problems) {
      const at = now();
      lastCall.set(hook, at);
      hasHadCalls.add(hook);
      if (rules.no_calls !== false && isOpen('no_calls', hook)) void resolve('no_calls', hook);
      const rule = rules.problem_rate;
      if (rule === false || problems === undefined) return;
      const s = slicesOf(hook);
      const slice = Math.floor(at / sliceMs(rule.window));
      const i = slice % (SLICES + 1);
      if (s.index[i] !== slice) {
        s.index[i] = slice;
        s.calls[i] = 0;
        s.problems[i] = 0;
      }
      s.calls[i]! += 1;
      if (!problems) return;
      s.problems[i]! += 1;
      if (isOpen('problem_rate', hook))
        return remember({ ...problemOccurrence(hook, 0, 0), counts: { with_problems: 1 }, at });
      const { calls, withProblems } = recentCalls(hook, at);
      if (overRatio(calls, withProblems)) {
        const p = problemOccurrence(hook, calls, withProblems);
        occur(p.rule, p.key, p.counts, p.summary);
      }
    },

    commitFailed() {
      if (rules.store_outage === false) return;
      const at = now();
      if (outage) {
        outage.refused += 1;
        outage.last = at;
        return;
      }
      const id = newId(at);
      const summary = outageSummary();
      log.error({ incident: id }, `alerts: incident opened: ${summary}`);
      const incident = { id, rule: 'store_outage', key: null, opened_at: iso(at), counts: { refused: 1 }, summary };
      outage = { id, since: at, last: at, refused: 1, sent: sender.sendNow({ kind: 'opened', incident }) };
    },

    committed() {
      if (outage !== undefined) endOutage();
    },

    deliveryDead(sink) {
      occur(
        'dead_delivery',
        sink,
        { dead: 1 },
        `Deliveries to sink "${sink}" went dead: they are not retried unless an operator retries them`,
      );
    },
  };

  const authOccurrence = (hook: string, refused: number, at: number): Pending => ({
    rule: 'auth_failures',
    key: hook,
    counts: { refused },
    at,
    summary: `Requests with a wrong key on hook "${hook}"`,
  });

  const rotatedKeySummary = (hook: string, sinceCall: number) =>
    `A request with a wrong key on hook "${hook}", ${spanText(sinceCall)} after its last accepted call: was the key changed in the calling service and not in callhook?`;

  const sliceMs = (window: number) => Math.max(1000, Math.ceil(window / SLICES));
  const slicesOf = (hook: string): Slices => {
    let s = slices.get(hook);
    if (!s) {
      const none = () => new Array<number>(SLICES + 1).fill(0);
      s = { index: new Array<number>(SLICES + 1).fill(-1), calls: none(), problems: none() };
      slices.set(hook, s);
    }
    return s;
  };
  const recentCalls = (hook: string, at: number) => {
    const rule = rules.problem_rate;
    const s = slices.get(hook);
    if (rule === false || !s) return { calls: 0, withProblems: 0 };
    const width = sliceMs(rule.window);
    const first = Math.floor((at - rule.window) / width) + 1;
    let calls = 0;
    let withProblems = 0;
    for (let i = 0; i <= SLICES; i++) {
      if (s.index[i]! < first) continue;
      calls += s.calls[i]!;
      withProblems += s.problems[i]!;
    }
    return { calls, withProblems };
  };
  const overRatio = (calls: number, withProblems: number) => {
    const rule = rules.problem_rate;
    return rule !== false && calls >= rule.min_calls && withProblems / calls > rule.ratio;
  };
  const problemOccurrence = (hook: string, calls: number, withProblems: number): Pending => ({
    rule: 'problem_rate',
    key: hook,
    counts: { with_problems: withProblems },
    at: now(),
    summary: `${withProblems} of the last ${calls} calls of hook "${hook}" carry problems: the AI's fields no longer match the hook's declared parameters (were the body parameters changed in the calling service?)`,
  });

  // --- the rules on the timer -----------------------------------------------------------------------------------

  const evaluations: Partial<Record<RuleName, () => Promise<void>>> = {
    async dead_delivery() {
      const rule = rules.dead_delivery;
      const incidents = openOf('dead_delivery');
      if (rule === false || incidents.length === 0) return;
      const [stats, states] = await Promise.all([store.deliveryStats(), store.sinkStates()]);
      for (const incident of incidents) {
        const sink = incident.key!;
        const dead = stats.find((s) => s.sink === sink && s.state === 'dead')?.count ?? 0;
        const quiet = now() - Date.parse(incident.lastEventAt) >= rule.quiet;
        // Every dead delivery retried, and the sink delivering again.
        const mended = dead === 0 && !isFailing(states.find((s) => s.sink === sink));
        if ((quiet || mended) && !pending.has(incidentKey('dead_delivery', sink))) await resolve('dead_delivery', sink);
      }
    },

    async sink_backlog() {
      const rule = rules.sink_backlog;
      if (rule === false) return;
      const [stats, states] = await Promise.all([store.deliveryStats(), store.sinkStates()]);
      for (const { name, pausedByDefault } of sinks) {
        const waiting = stats.find((s) => s.sink === name && s.state === 'pending');
        const age = waiting?.oldestCreatedAt == null ? 0 : now() - waiting.oldestCreatedAt;
        // A sink an operator paused is held on purpose: its backlog is no news to them.
        const paused = isPaused(
          states.find((s) => s.sink === name),
          pausedByDefault,
        );
        if (age > rule.older_than && !paused) {
          if (!isOpen('sink_backlog', name))
            occur(
              'sink_backlog',
              name,
              { waiting: waiting?.count ?? 0 },
              `Sink "${name}" has deliveries waiting for more than ${spanText(rule.older_than)}: the oldest for ${spanText(age)}`,
            );
        } else if (isOpen('sink_backlog', name)) await resolve('sink_backlog', name);
      }
    },

    async auth_failures() {
      const rule = rules.auth_failures;
      if (rule === false) return;
      for (const incident of openOf('auth_failures')) {
        const k = incidentKey('auth_failures', incident.key);
        if (now() - Date.parse(incident.lastEventAt) >= rule.quiet && !pending.has(k))
          await resolve('auth_failures', incident.key);
      }
    },

    async no_calls() {
      const rule = rules.no_calls;
      if (rule === false) return;
      const at = now();
      const inHours = isActive(rule.active_hours, Math.floor(minuteOfDay(at, timezone)));
      const since = activeWindowStart(rule.active_hours, timezone, at, rule.quiet_for);
      for (const hook of rule.hooks ?? hooks) {
        if (isOpen('no_calls', hook)) {
          // A call another replica took ends it too: one received since it opened, looked for since the last look
          // (less what a commit may lag behind its call's received_at).
          const opened = Date.parse(open.get(incidentKey('no_calls', hook))!.openedAt);
          const from = Math.max(opened, (checkedAt.get(hook) ?? opened) - SKEW_MS);
          checkedAt.set(hook, at);
          if ((await store.lastCallSince(hook, iso(from))) !== undefined) await resolve('no_calls', hook);
          continue;
        }
        checkedAt.delete(hook);
        if (!inHours || (lastCall.get(hook) ?? 0) >= since) continue;
        if (!hasHadCalls.has(hook)) {
          if (!(await store.hasCalls(hook))) continue;
          hasHadCalls.add(hook);
        }
        const found = await store.lastCallSince(hook, iso(since));
        if (found !== undefined) {
          lastCall.set(hook, Math.max(lastCall.get(hook) ?? 0, Date.parse(found)));
          continue;
        }
        occur(
          'no_calls',
          hook,
          {},
          `Hook "${hook}" has received no call for ${spanText(rule.quiet_for)} of its active hours ${rule.active_hours.text} (${timezone})`,
        );
      }
    },

    async problem_rate() {
      if (rules.problem_rate === false) return;
      const at = now();
      for (const hook of slices.keys()) {
        const { calls, withProblems } = recentCalls(hook, at);
        if (overRatio(calls, withProblems)) {
          if (!isOpen('problem_rate', hook)) {
            const p = problemOccurrence(hook, calls, withProblems);
            occur(p.rule, p.key, p.counts, p.summary);
          }
        } else if (isOpen('problem_rate', hook)) await resolve('problem_rate', hook);
      }
      // One opened before a restart, with no call since: nothing in memory holds it open.
      for (const incident of openOf('problem_rate'))
        if (!slices.has(incident.key!)) await resolve('problem_rate', incident.key);
    },

    async held_waiting() {
      const rule = rules.held_waiting;
      if (rule === false) return;
      const held = await store.heldCalls();
      const waiting = new Set<string>();
      for (const { hook, oldestAt, count } of held) {
        const age = now() - Date.parse(oldestAt);
        if (age <= rule.older_than) continue;
        waiting.add(hook);
        if (!isOpen('held_waiting', hook))
          occur(
            'held_waiting',
            hook,
            { held: count },
            `${count} held calls of hook "${hook}" wait for an operator; the oldest for ${spanText(age)}`,
          );
      }
      for (const incident of openOf('held_waiting'))
        if (!waiting.has(incident.key!)) await resolve('held_waiting', incident.key);
    },
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const tick = async () => {
    for (const o of [...unrecorded])
      await recordOutage(o).catch((err: unknown) => warn(err, 'cannot keep the store outage yet; trying again'));
    // A commit is what ends an outage; with no call coming, the readiness probe's commit does.
    if (outage)
      await store.ping().then(
        () => outage && endOutage(),
        () => undefined,
      );
    let incidents: IncidentRecord[];
    try {
      incidents = await store.listIncidents({ state: 'open', limit: OPEN_READ });
    } catch (err) {
      log.debug({ err }, 'alerts: cannot read the open incidents');
      return;
    }
    for (const [k] of open) if (!opening.has(k)) open.delete(k);
    for (const incident of incidents) open.set(incidentKey(incident.rule, incident.key), incident);
    for (const k of [...pending.keys()])
      await flushOne(k).catch((err: unknown) => warn(err, 'cannot count in an incident; trying again'));
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
    inStoreOutage: () => outage !== undefined,
    async stop() {
      clearInterval(timer);
      await running;
      for (const k of [...pending.keys()]) await flushOne(k).catch(() => undefined);
    },
  };
}

function outageSummary(): string {
  return 'The store cannot commit: calls are refused with 503, and the calling service does not send them again';
}

/** The `lost_calls` notice of one reconcile run that stored calls (docs/reference.md#alerts): opened and resolved at once. */
export async function recordLostCalls(
  store: Pick<IncidentStore, 'recordIncident'>,
  channels: readonly string[],
  stored: number,
  at = new Date(),
): Promise<IncidentRecord> {
  const incident: IncidentRecord = {
    id: newId(at.getTime()),
    rule: 'lost_calls',
    key: null,
    openedAt: at.toISOString(),
    lastEventAt: at.toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
    resolvedAt: at.toISOString(),
    counts: { stored },
    summary: `Reconcile stored ${stored} call${stored === 1 ? '' : 's'} whose webhook never arrived`,
  };
  await store.recordIncident(incident, { kind: 'opened', channels });
  return incident;
}
