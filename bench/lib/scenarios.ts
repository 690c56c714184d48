import { setTimeout as sleep } from 'node:timers/promises';
import { backlogDeliveries, createBacklog } from './backlog.js';
import { bodyFactory, type Encoding } from './bodies.js';
import { startHangingSink } from './hanging-sink.js';
import { createHistory, lookupBodies } from './in-call.js';
import { type LoadResult, load } from './load.js';
import { pacedLoad, startPacedLoad } from './paced.js';
import {
  API_KEY,
  REFERENCE_SCRIPT,
  referencePath,
  removeDir,
  type Server,
  startBaseline,
  startCallhook,
  startCallhookInPlace,
  startReference,
  tempDir,
} from './processes.js';
import { readRss, sampleRss } from './rss.js';
import type { BacklogCheck, BacklogTarget } from './sink-targets.js';

/**
 * The four measurements of the issue, each on fresh processes and fresh data dirs. They return raw figures;
 * run.ts takes medians and ratios. Anything that looks wrong but does not stop a run goes to `warnings`.
 */

export interface Settings {
  runs: number;
  /** Length of one measured run, after a warm-up that is not measured. */
  seconds: number;
  warmupSeconds: number;
  /** Requests sent in the memory run, and the time it may take at most. */
  rssRequests: number;
  rssBoundSeconds: number;
  backlog: number;
  drainBoundSeconds: number;
  /**
   * The same bound for a backlog into a queue or database sink, which delivers 8 at a time over the network (its
   * default concurrency), not 64 to a local file: a few hundred records a second, so 100,000 take minutes.
   */
  sinkDrainBoundSeconds: number;
}

export const warnings: string[] = [];

export const JSONL_ONLY = [{ name: 'jsonl', type: 'jsonl' }];
const RATE = 500;
const CONNECTIONS = 50;

export type ThroughputTarget =
  | 'hono-empty'
  | 'minimal-durable'
  | 'hono-durable'
  | 'callhook-route'
  | 'express-sqlite'
  | 'callhook-in-place'
  | `callhook-${Encoding}`;
export const THROUGHPUT_TARGETS: readonly ThroughputTarget[] = [
  'hono-empty',
  'minimal-durable',
  'hono-durable',
  'callhook-route',
  'express-sqlite',
  'callhook-json',
  'callhook-in-place',
  'callhook-form',
  'callhook-multipart',
];
const ENCODINGS: Partial<Record<ThroughputTarget, Encoding>> = {
  'callhook-form': 'form',
  'callhook-multipart': 'multipart',
};

/** Rows 1 and 2. The targets take turns within each run, so a machine that drifts affects them all alike. */
export async function measureThroughput(s: Settings): Promise<Record<ThroughputTarget, LoadResult[]>> {
  const results = Object.fromEntries(THROUGHPUT_TARGETS.map((t) => [t, [] as LoadResult[]])) as Record<
    ThroughputTarget,
    LoadResult[]
  >;
  // The yardstick lives beside the project, not in it: a machine without it measures everything else.
  const reference = referencePath();
  if (!reference) {
    const why = `the reference minimal durable receiver (${REFERENCE_SCRIPT} from the project's root) is not there: its row is missing, and so are the targets measured against it`;
    process.stderr.write(`bench: ${why}\n`);
    warnings.push(why);
  }
  for (let run = 0; run < s.runs; run++) {
    for (const target of THROUGHPUT_TARGETS) {
      if (target === 'minimal-durable' && !reference) continue;
      const encoding = ENCODINGS[target] ?? 'json';
      await withServer(
        target,
        JSONL_ONLY,
        async (server) => {
          const result = await load({
            url: server.url,
            body: bodyFactory(encoding),
            seconds: s.seconds,
            warmupSeconds: s.warmupSeconds,
            connections: CONNECTIONS,
            cpuOf: server.pid,
          });
          if (target !== 'callhook-route' && target.startsWith('callhook-'))
            await checkAccepted(server, result.ok, target);
          results[target].push(result);
        },
        reference,
      );
    }
  }
  return results;
}

export interface SlowSinkResult {
  without: LoadResult[];
  hanging: LoadResult[];
}

/** Row 3: the same fixed rate, with and without an http sink that holds every delivery for 30 s. */
export async function measureSlowSink(s: Settings): Promise<SlowSinkResult> {
  const sink = await startHangingSink(30_000);
  const result: SlowSinkResult = { without: [], hanging: [] };
  const slow = { name: 'slow', type: 'http', url: sink.url, timeout: '60s' };
  try {
    for (let run = 0; run < s.runs; run++) {
      for (const variant of ['without', 'hanging'] as const) {
        const before = sink.received();
        await withServer(
          'callhook-json',
          variant === 'hanging' ? [...JSONL_ONLY, slow] : JSONL_ONLY,
          async (server) => {
            const body = bodyFactory('json');
            result[variant].push(
              await pacedLoad({
                url: server.url,
                body,
                seconds: s.seconds,
                warmupSeconds: s.warmupSeconds,
                rate: RATE,
                connections: CONNECTIONS,
              }),
            );
          },
        );
        if (variant === 'hanging' && sink.received() === before)
          warnings.push('the hanging sink received no delivery: row 3 measured nothing');
      }
    }
  } finally {
    await sink.close();
  }
  return result;
}

export interface RssResult {
  requested: number;
  reached: number;
  seconds: number;
  rps: number;
  first: { requests: number; rss: number };
  end: number;
  peak: number;
  /** Deliveries still owed to the sink when intake stopped: whether the worker kept up. */
  outboxDepth: number | undefined;
  load: LoadResult[];
  complete: boolean;
}

/** Row 4: one long run in two parts, so the RSS after the first tenth can be compared with the RSS at the end. */
export async function measureRss(s: Settings): Promise<RssResult | undefined> {
  let out: RssResult | undefined;
  await withServer('callhook-json', JSONL_ONLY, async (server) => {
    const body = bodyFactory('json');
    const sampler = sampleRss(server.pid);
    const deadline = Date.now() + s.rssBoundSeconds * 1000;
    const left = () => Math.max(1, (deadline - Date.now()) / 1000);
    const firstAmount = Math.round(s.rssRequests / 10);
    const first = await load({
      url: server.url,
      body,
      amount: firstAmount,
      seconds: left(),
      connections: CONNECTIONS,
      latencies: false,
    });
    const firstRss = readRss(server.pid) ?? Number.NaN;
    const parts = [first];
    if (first.complete)
      parts.push(
        await load({
          url: server.url,
          body,
          amount: s.rssRequests - firstAmount,
          seconds: left(),
          connections: CONNECTIONS,
          latencies: false,
        }),
      );
    const end = readRss(server.pid) ?? Number.NaN;
    const seconds = parts.reduce((sum, p) => sum + p.seconds, 0);
    const reached = parts.reduce((sum, p) => sum + p.ok, 0);
    out = {
      requested: s.rssRequests,
      reached,
      seconds,
      rps: reached / seconds,
      first: { requests: first.ok, rss: firstRss },
      end,
      peak: sampler.stop(),
      outboxDepth: await metric(server, 'callhook_outbox_depth'),
      load: parts,
      complete: parts.every((p) => p.complete),
    };
  });
  return out;
}

export interface BacklogResult {
  /** The sink's entry in the config, as the row names it. */
  sink: BacklogTarget['sink'];
  count: number;
  buildSeconds: number;
  /** Backlog deliveries the receiver recorded as done when the drain ended (all of them, or at the bound). */
  drained: number;
  /** From the start of `callhook serve` to the last backlog delivery done, or to the bound. */
  seconds: number;
  intake: LoadResult;
  /** What the target held afterwards, counted in the target itself; undefined when it could not be read. */
  check: (BacklogCheck & { where: string; atLeastOnce: boolean; met: boolean }) | undefined;
}

/**
 * The backlog rows, one per sink: a backlog of `s.backlog` calls owed to the sink, written with the server down,
 * then drained by `serve` while intake runs at 500 req/s (its calls go to the same sink, as in production).
 * Drained means the receiver recorded every backlog delivery as done (backlog.ts: the outbox depth cannot say it,
 * as intake keeps adding deliveries, and polling /metrics would run inside the process being measured); the
 * target is then counted, with callhook stopped, to hold each backlog record: exactly once, or at least once for a
 * sink that cannot drop repeats. `target` is made by the caller; this removes it.
 */
export async function measureBacklog(
  s: Settings,
  makeTarget: (dataDir: string) => Promise<BacklogTarget>,
): Promise<BacklogResult> {
  const dataDir = tempDir();
  try {
    const target = await makeTarget(dataDir);
    try {
      return await drainBacklog(s, dataDir, target);
    } finally {
      await target
        .remove()
        .catch((err: unknown) =>
          warnings.push(`${target.sink.name}: the bench's target could not be removed (${(err as Error).message})`),
        );
    }
  } finally {
    removeDir(dataDir);
  }
}

async function drainBacklog(s: Settings, dataDir: string, target: BacklogTarget): Promise<BacklogResult> {
  const { sink } = target;
  const built = performance.now();
  await createBacklog(dataDir, s.backlog, sink.name);
  const buildSeconds = (performance.now() - built) / 1000;
  const deliveries = backlogDeliveries(dataDir, sink.name);
  let drained = 0;
  let seconds = 0;
  let intake: LoadResult;
  try {
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    const server = await startCallhook({ dataDir, sinks: [sink] });
    try {
      // Its first second is not counted (connection set-up, as in every row); the drain clock runs regardless.
      const load = startPacedLoad({
        url: server.url,
        body: bodyFactory('json'),
        seconds: s.drainBoundSeconds,
        warmupSeconds: 1,
        rate: RATE,
        connections: CONNECTIONS,
      });
      while (!deliveries.drained() && elapsed() < s.drainBoundSeconds) await sleep(250);
      seconds = elapsed();
      load.stop();
      intake = await load.result;
    } finally {
      await server.stop();
    }
    drained = deliveries.done();
  } finally {
    deliveries.close();
  }
  let check: BacklogResult['check'];
  try {
    const held = await target.check();
    const atLeastOnce = target.atLeastOnce ?? false;
    const met = held.distinct === s.backlog && (atLeastOnce ? held.records >= s.backlog : held.records === s.backlog);
    check = { ...held, where: target.where, atLeastOnce, met };
    if (!met)
      warnings.push(
        `${sink.name}: the target holds ${held.records} backlog records (${held.distinct} distinct) for a backlog of ${s.backlog}`,
      );
  } catch (err) {
    warnings.push(`${sink.name}: the target could not be counted (${(err as Error).message})`);
  }
  return { sink, count: s.backlog, buildSeconds, drained, seconds, intake, check };
}

export interface InCallResult {
  calls: number;
  callers: number;
  inCall: LoadResult[];
  ceiling: LoadResult[];
}

/**
 * In-call lookups (issue: "answers at once, well under a second"): 50 connections asking an in-call hook for the
 * history of callers in a store of `calls` calls, against the empty Hono route in the same run.
 */
export async function measureInCall(s: Settings): Promise<InCallResult> {
  const calls = s.backlog;
  const callers = Math.max(1, Math.round(calls / 10));
  const dataDir = tempDir();
  const result: InCallResult = { calls, callers, inCall: [], ceiling: [] };
  try {
    await createHistory(dataDir, calls, callers);
    const hooks = { 'end-of-call': {}, 'caller-lookup': { kind: 'in-call' } };
    for (let run = 0; run < s.runs; run++) {
      await withServer('hono-empty', JSONL_ONLY, async (server) => {
        result.ceiling.push(
          await load({
            url: server.url,
            body: bodyFactory('json'),
            seconds: s.seconds,
            warmupSeconds: s.warmupSeconds,
            connections: CONNECTIONS,
          }),
        );
      });
      const server = await startCallhook({ dataDir, sinks: JSONL_ONLY, hooks });
      try {
        const body = lookupBodies(callers);
        result.inCall.push(
          await load({
            url: server.url,
            path: '/webhooks/caller-lookup',
            body,
            seconds: s.seconds,
            warmupSeconds: s.warmupSeconds,
            connections: CONNECTIONS,
          }),
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    removeDir(dataDir);
  }
  return result;
}

async function withServer(
  target: ThroughputTarget,
  sinks: readonly Record<string, unknown>[],
  work: (server: Server) => Promise<void>,
  /** The reference receiver's script, for the `minimal-durable` target. */
  reference?: string,
): Promise<void> {
  const dataDir = tempDir();
  try {
    const server = await startTarget(target, sinks, dataDir, reference);
    try {
      await work(server);
    } finally {
      await server.stop();
    }
  } finally {
    removeDir(dataDir);
  }
}

function startTarget(
  target: ThroughputTarget,
  sinks: readonly Record<string, unknown>[],
  dataDir: string,
  reference: string | undefined,
): Promise<Server> {
  switch (target) {
    case 'hono-empty':
      return startBaseline('hono-empty');
    case 'minimal-durable':
      if (!reference) throw new Error(`${REFERENCE_SCRIPT} is not there`);
      return startReference(reference, dataDir);
    case 'hono-durable':
      return startBaseline('hono-durable', { BENCH_DATA_DIR: dataDir });
    case 'callhook-route':
      return startBaseline('callhook-route', { CALLHOOK_API_KEYS: API_KEY, CALLHOOK_DATA_DIR: dataDir });
    case 'express-sqlite':
      return startBaseline('express-sqlite', { BENCH_DATA_DIR: dataDir });
    case 'callhook-in-place':
      return startCallhookInPlace({ dataDir, sinks });
    default:
      return startCallhook({ dataDir, sinks });
  }
}

/**
 * Every 2xx must have been a new call: a duplicate is a cheaper request than the row claims to measure.
 * callhook may count more accepted calls than we saw 2xx: the requests in flight when a run stops are answered
 * after autocannon has stopped listening.
 */
export async function checkAccepted(server: Server, ok: number, target: string): Promise<void> {
  const accepted = await metric(server, 'callhook_requests_total', (line) => line.includes('outcome="accepted"'));
  const other = await metric(server, 'callhook_requests_total', (line) => !line.includes('outcome="accepted"'));
  if (accepted === undefined || accepted < ok)
    warnings.push(`${target}: ${ok} replies were 2xx but callhook counted ${accepted ?? 'no'} accepted calls`);
  if (other) warnings.push(`${target}: ${other} requests were not accepted as new calls (duplicate, held or refused)`);
}

/** One sample of callhook's /metrics: the sum of the lines of `name` that `keep` keeps; undefined when none. */
async function metric(
  server: Server,
  name: string,
  keep: (line: string) => boolean = () => true,
): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
    const lines = text.split('\n').filter((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && keep(l));
    return lines.length === 0 ? undefined : lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  } catch (err) {
    warnings.push(`${server.name}: /metrics could not be read (${(err as Error).message})`);
    return undefined;
  }
}
