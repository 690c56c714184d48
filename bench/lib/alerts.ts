import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pino from 'pino';
import { alertsSchema, DEFAULT_ALERTS } from '../../src/alerts/config.js';
import { createMonitor } from '../../src/alerts/monitor.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { bodyFactory } from './bodies.js';
import { type LoadResult, load } from './load.js';
import { API_KEY, removeDir, type Server, startCallhook, tempDir } from './processes.js';
import { checkAccepted, JSONL_ONLY, warnings } from './scenarios.js';
import { median } from './table.js';

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
  /** At 5 s or more, a timer tick at the default `every` falls inside every measured window. */
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

export interface FixedCost {
  /** CPU ms a second of an idle serve, every thread, by variant: one figure a round. */
  idle: Record<AlertVariant, number[]>;
  /** CPU ns of a call's events with every rule on: `committed` and `arrived`, as the webhook route calls them. */
  eventsNs: number;
}

const ROUNDS = 5;
const EVENTS = 1_000_000;

/**
 * What the throughput rows cannot tell from noise. The timer's cost and the sender's, where they run: the CPU of an
 * idle serve of each variant over `seconds`, every thread, the variants in turn for `rounds` rounds; a fresh store
 * that has taken one call (so `no_calls` reads as it does under load), measured from a second after it. And a call's
 * events alone in this process, the median of 5 rounds of a million after one not counted.
 */
export async function measureFixedCost(rounds: number, seconds: number): Promise<FixedCost> {
  const idle = Object.fromEntries(ALERT_VARIANTS.map((v) => [v, [] as number[]])) as FixedCost['idle'];
  for (let round = 0; round < rounds; round++)
    for (const variant of ALERT_VARIANTS) idle[variant].push(await idleCpu(variant, seconds));
  return { idle, eventsNs: await eventsCost() };
}

async function idleCpu(variant: AlertVariant, seconds: number): Promise<number> {
  const dataDir = tempDir();
  try {
    const server = await startCallhook({ dataDir, sinks: JSONL_ONLY, alerts: ALERTS[variant] });
    try {
      const reply = await fetch(`${server.url}/webhooks/end-of-call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: bodyFactory('json').next(),
      });
      await reply.arrayBuffer();
      if (reply.status !== 200) warnings.push(`alerts ${variant}: the idle serve's call was answered ${reply.status}`);
      await sleep(1_000);
      const before = runNs(server.pid);
      const started = performance.now();
      await sleep(seconds * 1000);
      return (runNs(server.pid) - before) / 1e6 / ((performance.now() - started) / 1000);
    } finally {
      await server.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}

/**
 * Nanoseconds every thread of the process has run, from schedstat(5): the idle figures are a few ms a second, finer
 * than stat's ticks of 10 ms. A thread that ends between the reads takes its time with it.
 */
function runNs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return ns;
}

async function eventsCost(): Promise<number> {
  const store = openSqliteStore({ path: ':memory:' });
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
    const per: number[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < EVENTS; i++) {
        monitor.committed();
        monitor.arrived('end-of-call', false);
      }
      const used = process.cpuUsage(before);
      if (round > 0) per.push(((used.user + used.system) * 1000) / EVENTS);
    }
    return median(per);
  } finally {
    await store.close();
  }
}
