import { spanText } from './message.js';
import { iso, type Pending, type RuleContext } from './open-incidents.js';
import { countCall, emptySlices, overRatio, problemRateSummary, recentCalls } from './problem-window.js';

/**
 * The rules at their events (docs/reference.md#alerts): a request with a wrong key (auth_failures), a call stored
 * (it ends no_calls, and counts for problem_rate) and a dead delivery (dead_delivery). They run on a call's path:
 * each keeps to counters in memory, and what it asks of the store is not waited for. The commits' own events, failed
 * or made, are store_outage's (store-outage.ts).
 */
export function createEventRules({ rules, store, incidents, seen, warn, now }: RuleContext, hooks: readonly string[]) {
  const watched = new Set(hooks);
  /** The wrong keys of the last `per`, by hook. */
  const wrongKeys = new Map<string, number[]>();
  /** The hooks whose last call was looked for in the store. */
  const lookedUp = new Set<string>();

  return {
    wrongKey(hook: string) {
      const rule = rules.auth_failures;
      if (rule === false || !watched.has(hook)) return;
      const at = now();
      if (incidents.isOpen('auth_failures', hook)) return incidents.remember(authOccurrence(hook, 1, at));
      const times = wrongKeys.get(hook) ?? [];
      times.push(at);
      if (times.length > rule.max) times.shift();
      wrongKeys.set(hook, times);
      if (times.length >= rule.max && at - times[0]! <= rule.per) {
        wrongKeys.delete(hook);
        const p = authOccurrence(hook, times.length, at);
        return incidents.occur(
          p.rule,
          p.key,
          p.counts,
          `${times.length} requests with a wrong key on hook "${hook}" within ${spanText(rule.per)}`,
        );
      }
      if (rule.after_success <= 0) return;
      const afterAccepted = (last: number) => {
        if (at - last >= rule.after_success) return;
        incidents.occur('auth_failures', hook, { refused: 1 }, rotatedKeySummary(hook, at - last));
      };
      const last = seen.lastCall.get(hook);
      if (last !== undefined) return afterAccepted(last);
      if (lookedUp.has(hook)) return;
      // After a restart memory knows no call yet: the store does, once a hook.
      lookedUp.add(hook);
      store
        .lastCallSince(hook, iso(at - rule.after_success))
        .then((found) => {
          if (found === undefined) return;
          seen.lastCall.set(hook, Math.max(seen.lastCall.get(hook) ?? 0, Date.parse(found)));
          afterAccepted(Date.parse(found));
        })
        .catch((err: unknown) => warn(err, 'cannot read a hook’s last call', { hook }));
    },

    arrived(hook: string, problems: boolean | undefined) {
      const at = now();
      seen.lastCall.set(hook, at);
      seen.hasHadCalls.add(hook);
      if (rules.no_calls !== false && incidents.isOpen('no_calls', hook)) void incidents.resolve('no_calls', hook);
      const rule = rules.problem_rate;
      if (rule === false || problems === undefined) return;
      let slices = seen.slices.get(hook);
      if (!slices) seen.slices.set(hook, (slices = emptySlices()));
      countCall(slices, rule.window, at, problems);
      if (!problems) return;
      const { calls, withProblems } = recentCalls(slices, rule.window, at);
      // The summary is the window as it is now: should the incident have resolved elsewhere before this is counted,
      // the one it opens again says what it saw.
      if (incidents.isOpen('problem_rate', hook))
        return incidents.remember({
          rule: 'problem_rate',
          key: hook,
          counts: { with_problems: 1 },
          at,
          summary: problemRateSummary(hook, calls, withProblems),
        });
      if (overRatio(rule, calls, withProblems))
        incidents.occur(
          'problem_rate',
          hook,
          { with_problems: withProblems },
          problemRateSummary(hook, calls, withProblems),
        );
    },

    deliveryDead(sink: string) {
      incidents.occur(
        'dead_delivery',
        sink,
        { dead: 1 },
        `Deliveries to sink "${sink}" went dead: they are not retried unless an operator retries them`,
      );
    },
  };
}

const authOccurrence = (hook: string, refused: number, at: number): Pending => ({
  rule: 'auth_failures',
  key: hook,
  counts: { refused },
  at,
  summary: `Requests with a wrong key on hook "${hook}"`,
});

const rotatedKeySummary = (hook: string, sinceCall: number) =>
  `A request with a wrong key on hook "${hook}", ${spanText(sinceCall)} after its last accepted call: was the key changed in the calling service and not in callhook?`;
