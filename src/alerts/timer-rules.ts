import { isFailing, isPaused } from '../store/sink-state.js';
import { activeWindowStart, isActive, minuteOfDay } from './active-hours.js';
import type { RuleName } from './config.js';
import { spanText } from './message.js';
import { iso, type RuleContext } from './open-incidents.js';
import { overRatio, problemRateSummary, recentCalls } from './problem-window.js';

/** Calls committed on another replica reach the store a little after their received_at: look back this far more. */
const SKEW_MS = 60_000;

export interface TimerRulesDeps {
  /** The end-of-call hooks: the ones calls arrive at. */
  hooks: readonly string[];
  sinks: readonly { name: string; pausedByDefault: boolean }[];
  timezone: string;
}

/**
 * The rules on the timer (docs/reference.md#alerts): one evaluation each, run at every tick in this order. Each reads
 * what the store already counts (the delivery counts, the sinks' state, the held calls) or what memory holds, opens
 * the incidents it finds, and resolves the open ones whose condition is over.
 */
export function createTimerRules(
  { rules, store, incidents, seen, now }: RuleContext,
  { hooks, sinks, timezone }: TimerRulesDeps,
): Partial<Record<RuleName, () => Promise<void>>> {
  /** The last time each hook's no_calls incident was checked against the store, for a call another replica took. */
  const checkedAt = new Map<string, number>();

  return {
    async dead_delivery() {
      const rule = rules.dead_delivery;
      const open = incidents.openOf('dead_delivery');
      if (rule === false || open.length === 0) return;
      const [stats, states] = await Promise.all([store.deliveryStats(), store.sinkStates()]);
      for (const incident of open) {
        const sink = incident.key!;
        const dead = stats.find((s) => s.sink === sink && s.state === 'dead')?.count ?? 0;
        const quiet = now() - Date.parse(incident.lastEventAt) >= rule.quiet;
        // Every dead delivery retried, and the sink delivering again.
        const mended = dead === 0 && !isFailing(states.find((s) => s.sink === sink));
        if ((quiet || mended) && !incidents.hasPending('dead_delivery', sink))
          await incidents.resolve('dead_delivery', sink);
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
          if (!incidents.isOpen('sink_backlog', name))
            incidents.occur(
              'sink_backlog',
              name,
              { waiting: waiting?.count ?? 0 },
              `Sink "${name}" has deliveries waiting for more than ${spanText(rule.older_than)}: the oldest for ${spanText(age)}`,
            );
        } else if (incidents.isOpen('sink_backlog', name)) await incidents.resolve('sink_backlog', name);
      }
    },

    async auth_failures() {
      const rule = rules.auth_failures;
      if (rule === false) return;
      for (const incident of incidents.openOf('auth_failures')) {
        if (
          now() - Date.parse(incident.lastEventAt) >= rule.quiet &&
          !incidents.hasPending('auth_failures', incident.key)
        )
          await incidents.resolve('auth_failures', incident.key);
      }
    },

    async no_calls() {
      const rule = rules.no_calls;
      if (rule === false) return;
      const at = now();
      const inHours = isActive(rule.active_hours, Math.floor(minuteOfDay(at, timezone)));
      const since = activeWindowStart(rule.active_hours, timezone, at, rule.quiet_for);
      for (const hook of rule.hooks ?? hooks) {
        if (incidents.isOpen('no_calls', hook)) {
          // A call another replica took ends it too: one received since it opened, looked for since the last look
          // (less what a commit may lag behind its call's received_at).
          const opened = Date.parse(incidents.get('no_calls', hook)!.openedAt);
          const from = Math.max(opened, (checkedAt.get(hook) ?? opened) - SKEW_MS);
          checkedAt.set(hook, at);
          if ((await store.lastCallSince(hook, iso(from))) !== undefined) await incidents.resolve('no_calls', hook);
          continue;
        }
        checkedAt.delete(hook);
        if (!inHours || (seen.lastCall.get(hook) ?? 0) >= since) continue;
        if (!seen.hasHadCalls.has(hook)) {
          if (!(await store.hasCalls(hook))) continue;
          seen.hasHadCalls.add(hook);
        }
        const found = await store.lastCallSince(hook, iso(since));
        if (found !== undefined) {
          seen.lastCall.set(hook, Math.max(seen.lastCall.get(hook) ?? 0, Date.parse(found)));
          continue;
        }
        incidents.occur(
          'no_calls',
          hook,
          {},
          `Hook "${hook}" has received no call for ${spanText(rule.quiet_for)} of its active hours ${rule.active_hours.text} (${timezone})`,
        );
      }
    },

    async problem_rate() {
      const rule = rules.problem_rate;
      if (rule === false) return;
      const at = now();
      for (const [hook, slices] of seen.slices) {
        const { calls, withProblems } = recentCalls(slices, rule.window, at);
        if (overRatio(rule, calls, withProblems)) {
          if (!incidents.isOpen('problem_rate', hook))
            incidents.occur(
              'problem_rate',
              hook,
              { with_problems: withProblems },
              problemRateSummary(hook, calls, withProblems),
            );
        } else if (incidents.isOpen('problem_rate', hook)) await incidents.resolve('problem_rate', hook);
      }
      // One opened before a restart, with no call since: nothing in memory holds it open.
      for (const incident of incidents.openOf('problem_rate'))
        if (!seen.slices.has(incident.key!)) await incidents.resolve('problem_rate', incident.key);
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
        if (!incidents.isOpen('held_waiting', hook))
          incidents.occur(
            'held_waiting',
            hook,
            { held: count },
            `${count} held calls of hook "${hook}" wait for an operator; the oldest for ${spanText(age)}`,
          );
      }
      for (const incident of incidents.openOf('held_waiting'))
        if (!waiting.has(incident.key!)) await incidents.resolve('held_waiting', incident.key);
    },
  };
}
