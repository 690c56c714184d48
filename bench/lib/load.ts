import autocannon from 'autocannon';
import type { BodyFactory } from './bodies.js';
import { type CpuPerRequest, type CpuWindow, cpuWindow } from './cpu.js';
import { API_KEY } from './processes.js';

/** One autocannon run against a webhook route, always bounded in time, with what went wrong counted. */

export interface LoadOptions {
  url: string;
  /** The route under `url`; the end-of-call webhook unless given. */
  path?: string;
  body: BodyFactory;
  connections?: number;
  /** Seconds to measure; or, with `amount`, the most it may take before it is stopped and reported as reached. */
  seconds: number;
  /**
   * Seconds run first on the same connections and not counted. A new autocannon run opens 50 connections at
   * once and the first request of each waits behind the others' set-up; counting them would measure the
   * bench's start rather than the server's steady state.
   */
  warmupSeconds?: number;
  amount?: number;
  /** Keep every 2xx latency for exact percentiles; off for runs of a million requests. */
  latencies?: boolean;
  /** The server's process id, to count the CPU it and the load generator spend per request (cpu.ts). */
  cpuOf?: number;
}

export interface LoadResult {
  /** 2xx replies per second of the measured part: errors and non-2xx replies are not throughput. */
  rps: number;
  ok: number;
  p50: number;
  p99: number;
  seconds: number;
  /** Status codes other than 2xx with their counts, e.g. "503×12". */
  statuses: string;
  /** Counted over the whole run, warm-up included: an error is an error whenever it happens. */
  errors: number;
  timeouts: number;
  non2xx: number;
  /** False when an `amount` run was cut by its time bound. */
  complete: boolean;
  /** Over the measured part, when `cpuOf` was given. */
  cpu?: CpuPerRequest;
}

export interface RunningLoad {
  /** Ends the run early (e.g. when a drain is over); its result still comes. */
  stop(): void;
  result: Promise<LoadResult>;
}

export function startLoad({
  url,
  path = '/webhooks/end-of-call',
  body,
  connections = 50,
  seconds,
  warmupSeconds = 0,
  amount,
  latencies = true,
  cpuOf,
}: LoadOptions): RunningLoad {
  // Our own samples: autocannon's histogram truncates to whole milliseconds, and sub-millisecond replies need
  // the raw figures.
  const samples: number[] = [];
  let ok = 0;
  let cut = false;
  const measureFrom = performance.now() + warmupSeconds * 1000;
  let instance: autocannon.Instance | undefined;
  let cpu: CpuWindow | undefined;
  const countCpu = cpuOf === undefined ? undefined : setTimeout(() => (cpu = cpuWindow(cpuOf)), warmupSeconds * 1000);
  // An `amount` run against a server that stalls would otherwise never end. Unref'd: it must not keep the
  // bench alive once the run is over for another reason.
  const bound = setTimeout(
    () => ((cut = true), instance?.stop()),
    (amount === undefined ? warmupSeconds + seconds + 15 : seconds) * 1000,
  ).unref();
  const result = new Promise<LoadResult>((resolve, reject) => {
    instance = autocannon(
      {
        url: `${url}${path}`,
        method: 'POST',
        connections,
        // autocannon refuses a key that is present but undefined, so only the ones in use are passed.
        ...(amount === undefined ? { duration: warmupSeconds + seconds } : { amount }),
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': body.contentType },
        requests: [
          {
            setupRequest: (request) => {
              request.body = body.next();
              return request;
            },
          },
        ],
      },
      (err, r) => {
        clearTimeout(bound);
        clearTimeout(countCpu);
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        const elapsed =
          warmupSeconds > 0
            ? (performance.now() - measureFrom) / 1000
            : (r.finish.getTime() - r.start.getTime()) / 1000;
        const sorted = Float64Array.from(samples).sort();
        resolve({
          rps: ok / elapsed,
          ok,
          p50: samples.length > 0 ? percentile(sorted, 50) : r.latency.p50,
          p99: samples.length > 0 ? percentile(sorted, 99) : r.latency.p99,
          seconds: elapsed,
          errors: r.errors,
          timeouts: r.timeouts,
          non2xx: r.non2xx,
          statuses: Object.entries(r.statusCodeStats ?? {})
            .filter(([code]) => !code.startsWith('2'))
            .map(([code, { count }]) => `${code}×${count ?? 0}`)
            .join(' '),
          complete: !cut,
          cpu: cpu?.end(ok),
        });
      },
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status < 200 || status >= 300 || performance.now() < measureFrom) return;
      ok++;
      if (latencies) samples.push(ms);
    });
  });
  return { stop: () => instance?.stop(), result };
}

export function load(options: LoadOptions): Promise<LoadResult> {
  return startLoad(options).result;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: Float64Array, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}
