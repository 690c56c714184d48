import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pino from 'pino';
import { alertsSchema, DEFAULT_ALERTS } from '../../src/alerts/config.js';
import { createMonitor } from '../../src/alerts/monitor.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { seedStore } from './backlog.js';
import { bodyFactory, callFields } from './bodies.js';
import { type LoadResult, load } from './load.js';
import { removeDir, type Server, startCallhook, tempDir } from './processes.js';
import { checkAccepted, JSONL_ONLY, warnings } from './scenarios.js';

/**
 * The alert rules' cost on intake (docs/reference.md#alerts: evaluated from what the store already counts, a call's
 * path costs a counter or two): JSON intake at full speed on SQLite with no alert channel, so no rule is on, against
 * the same with a `log` channel and every rule on, `no_calls` all day, at the default `every` and at its shortest.
 * The variants take turns within each round, each round starting one further along, so a machine that drifts or a
 * run that follows another's disk work affects them all alike.
 */

export const ALERT_VARIANTS = ['off', 'on', 'on-100ms'] as const;
export type AlertVariant = (typeof ALERT_VARIANTS)[number];

export interface AlertsSettings {
  rounds: number;
  /** Long enough for a timer tick at the default `every` (5 s) to fall inside every measured window. */
  seconds: number;
  warmupSeconds: number;
}

export interface AlertsResult {
  runs: Record<AlertVariant, LoadResult[]>;
  /** The 1-minute load average as each run started: other work on the machine shows in the spread. */
  loads: number[];
}

/** Every rule the config knows, each with its defaults, but `no_calls` (off unless named) watching all day. */
const EVERY_RULE = Object.fromEntries(
  Object.keys(DEFAULT_ALERTS.rules).map((rule) => [rule, rule === 'no_calls' ? { active_hours: '00:00-24:00' } : true]),
);
const LOG_CHANNEL = [{ name: 'bench-log', type: 'log' }];

/**
 * Its lines go where callhook's log goes (/dev/null here, as in every row), and only when an incident opens or
 * resolves: none does during a measured window, which is checked.
 */
const ALERTS: Record<AlertVariant, Record<string, unknown> | undefined> = {
  off: undefined,
  on: { channels: LOG_CHANNEL, rules: EVERY_RULE },
  'on-100ms': { channels: LOG_CHANNEL, rules: EVERY_RULE, every: '100ms' },
};

export async function measureAlerts(s: AlertsSettings): Promise<AlertsResult> {
  const runs = Object.fromEntries(ALERT_VARIANTS.map((v) => [v, [] as LoadResult[]])) as AlertsResult['runs'];
  const loads: number[] = [];
  for (let round = 0; round < s.rounds; round++) {
    for (let i = 0; i < ALERT_VARIANTS.length; i++) {
      const variant = ALERT_VARIANTS[(round + i) % ALERT_VARIANTS.length]!;
      loads.push(loadavg()[0]!);
      runs[variant].push(await measureOne(variant, s));
    }
  }
  return { runs, loads };
}

async function measureOne(variant: AlertVariant, s: AlertsSettings): Promise<LoadResult> {
  const dataDir = tempDir();
  try {
    const server = await startCallhook({ dataDir, sinks: JSONL_ONLY, alerts: ALERTS[variant] });
    let result: LoadResult;
    try {
      result = await load({
        url: server.url,
        body: bodyFactory('json'),
        seconds: s.seconds,
        warmupSeconds: s.warmupSeconds,
        connections: 50,
        cpuOf: server.pid,
      });
      await checkAccepted(server, result.ok, `alerts ${variant}`);
      const during = incidents(dataDir);
      if (during > 0)
        warnings.push(
          `alerts ${variant}: ${during} incident(s) opened during the run: its row measures more than the rules' evaluation`,
        );
      if (variant !== 'off') await proveOn(server, dataDir, variant);
      else await wrongKey(server);
    } finally {
      await server.stop();
    }
    if (variant === 'off' && incidents(dataDir) > 0)
      warnings.push('alerts off: an incident was opened with no alert channel: the off rows had rules on');
    return result;
  } finally {
    removeDir(dataDir);
  }
}

/**
 * After the measured window, that the rules were on in this serve: a wrong key on a hook that has just accepted
 * calls opens an `auth_failures` incident at once (its `after_success`), with no channel none.
 */
async function proveOn(server: Server, dataDir: string, variant: AlertVariant): Promise<void> {
  await wrongKey(server);
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (incidents(dataDir, 'auth_failures') > 0) return;
    await sleep(50);
  }
  warnings.push(`alerts ${variant}: a wrong key opened no incident: the rules were not on in this run`);
}

async function wrongKey(server: Server): Promise<void> {
  const reply = await fetch(`${server.url}/webhooks/end-of-call`, {
    method: 'POST',
    headers: { authorization: 'Bearer not-the-bench-key', 'content-type': 'application/json' },
    body: '{}',
  });
  await reply.arrayBuffer();
  if (reply.status !== 401) warnings.push(`alerts: a wrong key was answered ${reply.status}, not 401`);
}

/** Incidents in the serve's store (of one rule), read on a connection of the bench's own. */
function incidents(dataDir: string, rule?: string): number {
  const db = new Database(join(dataDir, SQLITE_FILE), { readonly: true });
  try {
    const sql = `SELECT count(*) FROM incidents${rule ? ' WHERE rule = ?' : ''}`;
    return db
      .prepare(sql)
      .pluck()
      .get(...(rule ? [rule] : [])) as number;
  } finally {
    db.close();
  }
}

export interface EvaluationCost {
  /** Calls in the store the rules read. */
  calls: number;
  /** CPU ms, every thread of this process (the store's reader thread included), of one evaluation of every rule. */
  tickMs: number;
  /** CPU ns of a call's events with every rule on: `committed` and `arrived`, as the webhook route calls them. */
  eventsNs: number;
}

const ROUNDS = 5;
const TICKS = 50;
const EVENTS = 1_000_000;

/**
 * What the throughput rows cannot tell from noise, each alone in this process: one evaluation of every rule (what the
 * timer runs each `every`) against a SQLite store of `calls` calls, and a call's events. Medians of the rounds after
 * one not counted.
 */
export async function measureEvaluation(calls: number): Promise<EvaluationCost> {
  const dataDir = tempDir();
  try {
    await seedStore(dataDir, calls, (n) => callFields(`alerts-${n}`), ['jsonl']);
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    try {
      const monitor = createMonitor({
        rules: alertsSchema.parse(ALERTS.on).rules,
        channels: LOG_CHANNEL.map((c) => c.name),
        store,
        sender: { notify: () => undefined, sendNow: async () => [] },
        log: pino({ level: 'silent' }),
        hooks: ['end-of-call'],
        sinks: [{ name: 'jsonl', pausedByDefault: false }],
        timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        everyMs: 5_000,
      });
      // As under load: the hook has had a call this second.
      monitor.arrived('end-of-call', false);
      const ticks = await rounds(TICKS, async () => {
        for (let i = 0; i < TICKS; i++) await monitor.tick();
      });
      const events = await rounds(EVENTS, () => {
        for (let i = 0; i < EVENTS; i++) {
          monitor.committed();
          monitor.arrived('end-of-call', false);
        }
      });
      return { calls, tickMs: ticks / 1000, eventsNs: events * 1000 };
    } finally {
      await store.close();
    }
  } finally {
    removeDir(dataDir);
  }
}

/** CPU µs of each of the `times` things a round does, the median of the rounds after the first. */
async function rounds(times: number, round: () => Promise<void> | void): Promise<number> {
  const per: number[] = [];
  for (let i = 0; i <= ROUNDS; i++) {
    const before = process.cpuUsage();
    await round();
    const used = process.cpuUsage(before);
    if (i > 0) per.push((used.user + used.system) / times);
  }
  return per.sort((a, b) => a - b)[Math.floor(per.length / 2)]!;
}
