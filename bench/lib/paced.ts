import { Agent, request } from 'node:http';
import type { BodyFactory } from './bodies.js';
import { type LoadResult, percentile, type RunningLoad } from './load.js';
import { API_KEY } from './processes.js';

/**
 * Requests at a fixed rate, evenly spaced: one every 1/rate s, however long the replies take.
 *
 * autocannon's `overallRate` is not that. Each connection sends its share of a second as fast as it can at the
 * start of the second and then waits, so "500 req/s on 50 connections" is a burst of 500 requests at full
 * concurrency every second, and its p99 is the p99 of full load. The fixed-rate rows ask how a reply
 * fares at a steady 500 req/s, so they use this sender; the throughput rows stay on autocannon.
 *
 * Open loop: a request is due at its slot whether or not earlier ones are answered, and its latency runs from
 * the slot, so a stalled server shows as the stall rather than as fewer, faster requests (coordinated omission).
 * At most `connections` are open; a request due while all of them are busy waits, and the wait counts.
 */

export interface PacedOptions {
  url: string;
  path?: string;
  body: BodyFactory;
  rate: number;
  connections?: number;
  seconds: number;
  /** Seconds sent first and not counted: the first requests open the connections. */
  warmupSeconds?: number;
}

/** The sender's own time-out (spec 6.1): a reply later than this is a lost call. */
const TIMEOUT_MS = 10_000;
/** How often due requests are sent. Below the 2 ms spacing of 500 req/s; a late tick sends what is overdue. */
const TICK_MS = 1;

export function startPacedLoad({
  url,
  path = '/webhooks/end-of-call',
  body,
  rate,
  connections = 50,
  seconds,
  warmupSeconds = 0,
}: PacedOptions): RunningLoad {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(path, url);
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': body.contentType };
  const samples: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  let timeouts = 0;
  let sent = 0;
  let pending = 0;
  let stopped = false;
  const start = performance.now();
  const measureFrom = start + warmupSeconds * 1000;
  const end = measureFrom + seconds * 1000;
  let stoppedAt = end;

  let finish: () => void = () => {};
  const allAnswered = new Promise<void>((resolve) => (finish = resolve));

  const send = (due: number) => {
    pending++;
    let settled = false;
    let timedOut = false;
    const settle = (status?: number) => {
      if (settled) return;
      settled = true;
      pending--;
      if (status !== undefined && due >= measureFrom) {
        if (status >= 200 && status < 300) samples.push(performance.now() - due);
        else statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      if (stopped && pending === 0) finish();
    };
    const payload = body.next();
    const req = request(
      target,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
        timeout: TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => settle(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => {
      timedOut = true;
      timeouts++;
      req.destroy();
    });
    // A time-out destroys the request, which then reports an error: that request is counted once, as a time-out.
    req.on('error', () => {
      if (!timedOut) errors++;
      settle();
    });
    req.on('close', () => settle());
    req.end(payload);
  };

  const stop = () => {
    if (stopped) return;
    stopped = true;
    stoppedAt = Math.min(performance.now(), end);
    clearInterval(ticker);
    if (pending === 0) finish();
  };

  const ticker = setInterval(() => {
    const now = performance.now();
    const due = Math.floor(((Math.min(now, end) - start) / 1000) * rate);
    for (; sent < due; sent++) send(start + (sent / rate) * 1000);
    if (now >= end) stop();
  }, TICK_MS);

  const result = allAnswered.then((): LoadResult => {
    agent.destroy();
    const measured = Math.max(0.001, (stoppedAt - measureFrom) / 1000);
    const sorted = Float64Array.from(samples).sort();
    const non2xx = [...statuses.values()].reduce((n, c) => n + c, 0);
    return {
      rps: samples.length / measured,
      ok: samples.length,
      p50: samples.length > 0 ? percentile(sorted, 50) : Number.NaN,
      p99: samples.length > 0 ? percentile(sorted, 99) : Number.NaN,
      seconds: measured,
      statuses: [...statuses].map(([code, count]) => `${code}×${count}`).join(' '),
      errors,
      timeouts,
      non2xx,
      complete: true,
    };
  });
  return { stop, result };
}

export function pacedLoad(options: PacedOptions): Promise<LoadResult> {
  return startPacedLoad(options).result;
}
