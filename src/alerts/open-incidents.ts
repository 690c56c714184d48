import type { Logger } from 'pino';
import { newId } from '../ids.js';
import type { AdminQueries } from '../store/admin-queries.js';
import { addCounts, type IncidentRecord, type IncidentStore, incidentKey } from '../store/incidents.js';
import type { RuleName, RulesConfig } from './config.js';
import { spanText } from './message.js';
import type { Slices } from './problem-window.js';
import type { AlertSender } from './sender.js';

/**
 * The open incidents as this process keeps them (docs/reference.md#alerts), and what the rules share. An occurrence
 * opens an incident in the store, or counts in the one open for its rule and key; a rule whose condition is over
 * resolves it. The open ones are read at each tick and kept by this process's own opens and resolves between; an
 * occurrence of an open incident waits in memory (`pending`) for the tick to write it.
 */

/** An occurrence not yet written: a count of an open incident, or an opening the store could not take. */
export interface Pending {
  rule: RuleName;
  key: string | null;
  counts: Record<string, number>;
  at: number;
  summary: string;
}

export type Warn = (err: unknown, what: string, fields?: Record<string, unknown>) => void;

export const iso = (ms: number) => new Date(ms).toISOString();

export interface OpenIncidents {
  /** An occurrence: opens the rule's incident for the key, or counts in the open one. */
  occur(rule: RuleName, key: string | null, counts: Record<string, number>, summary: string): void;
  /** An occurrence kept in memory, for the tick to write. */
  remember(p: Pending): void;
  resolve(rule: RuleName, key: string | null): Promise<void>;
  isOpen(rule: RuleName, key: string | null): boolean;
  get(rule: RuleName, key: string | null): IncidentRecord | undefined;
  openOf(rule: RuleName): IncidentRecord[];
  /** Whether an occurrence waits in memory: news the incident's `lastEventAt` in the store does not show yet. */
  hasPending(rule: RuleName, key: string | null): boolean;
  /** The open incidents as the store has them now; the ones this process is still opening stay. */
  reread(incidents: readonly IncidentRecord[]): void;
  /** Writes every occurrence in memory; one that fails stays for the next time, and `failed` hears of it. */
  flushPending(failed: (err: unknown) => void): Promise<void>;
}

export interface OpenIncidentsDeps {
  rules: RulesConfig;
  /** The channels' names: each incident's messages go to every one. */
  channels: readonly string[];
  store: Pick<IncidentStore, 'openIncident' | 'countIncident' | 'resolveIncident'>;
  sender: Pick<AlertSender, 'notify'>;
  log: Logger;
  warn: Warn;
  now: () => number;
}

export function createOpenIncidents({
  rules,
  channels,
  store,
  sender,
  log,
  warn,
  now,
}: OpenIncidentsDeps): OpenIncidents {
  /** The open incidents by rule and key: read at each tick, kept by this process's own opens and resolves between. */
  const open = new Map<string, IncidentRecord>();
  const opening = new Set<string>();
  const resolving = new Set<string>();
  /** Occurrences not yet written: counts of open incidents, and openings the store could not take. */
  const pending = new Map<string, Pending>();

  const remember = (p: Pending) => {
    const k = incidentKey(p.rule, p.key);
    const before = pending.get(k);
    pending.set(k, before ? { ...p, counts: addCounts(before.counts, p.counts), summary: before.summary } : p);
  };

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

  return {
    occur,
    remember,
    resolve,
    isOpen: (rule, key) => open.has(incidentKey(rule, key)),
    get: (rule, key) => open.get(incidentKey(rule, key)),
    openOf: (rule) => [...open.values()].filter((incident) => incident.rule === rule),
    hasPending: (rule, key) => pending.has(incidentKey(rule, key)),
    reread(incidents) {
      for (const [k] of open) if (!opening.has(k)) open.delete(k);
      for (const incident of incidents) open.set(incidentKey(incident.rule, incident.key), incident);
    },
    async flushPending(failed) {
      for (const k of [...pending.keys()]) await flushOne(k).catch(failed);
    },
  };
}

/** What memory knows of the calls, for the rules at their events and on the timer alike. */
export interface CallsSeen {
  /** Each hook's last call. */
  lastCall: Map<string, number>;
  /** The hooks known to have had a call: no_calls looks for no call at a hook that never had one. */
  hasHadCalls: Set<string>;
  /** Each hook's recent calls, with problems or not (problem-window.ts). */
  slices: Map<string, Slices>;
}

/** What the rules at their events (event-rules.ts) and on the timer (timer-rules.ts) share. */
export interface RuleContext {
  rules: RulesConfig;
  store: Pick<IncidentStore, 'lastCallSince' | 'hasCalls' | 'heldCalls'> &
    Pick<AdminQueries, 'deliveryStats' | 'sinkStates'>;
  incidents: OpenIncidents;
  seen: CallsSeen;
  warn: Warn;
  now: () => number;
}
