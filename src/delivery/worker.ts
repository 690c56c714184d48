import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { CallRecord } from '../record.js';
import type { DeliveryPolicy } from '../sinks/policy.js';
import type { DeliveryResult, Sink } from '../sinks/sink.js';
import type { AttemptResult, ClaimedDelivery, Outbox } from '../store/outbox.js';
import { attemptError } from './attempt-error.js';
import { attemptOutcome } from './attempt-outcome.js';
import { type RateWindow, rateWindow } from './rate-window.js';

/**
 * The outbox worker: takes due deliveries from the store and hands each to its sink, off the request path. Each sink
 * has its own loop, so a slow or hanging sink never holds back another (or the replies). A sink's loop starts no more
 * than its `rate` allows, and none while the sink is paused or waiting out a 429
 * (docs/reference.md#queues-and-databases): the store's claim holds a paused or waiting sink for every replica, this
 * loop for itself.
 */

export interface WorkerSink {
  sink: Sink;
  /** Its retry schedule, attempt timeout and concurrency. */
  policy: DeliveryPolicy;
}

export interface AttemptEvent {
  sink: string;
  outcome: AttemptResult['outcome'];
  durationMs: number;
  /** The sink answered "too many requests" (docs/reference.md#queues-and-databases). */
  rateLimited: boolean;
  /** The store recorded it: false when the write failed or a lease taken over made it stale. */
  recorded: boolean;
}

export interface WorkerOptions {
  store: Outbox;
  sinks: ReadonlyMap<string, WorkerSink>;
  log: Logger;
  /**
   * How long a claimed delivery stays ours at the least (and always 10 s past the sink's timeout); a killed
   * process's leases are taken again after it.
   */
  leaseMs?: number;
  /** Longest sleep between looks at the outbox when nothing woke the worker. */
  idleMs?: number;
  /** Told of every finished attempt (metrics). */
  onAttempt?: (event: AttemptEvent) => void;
  /**
   * Takes the secrets out of an attempt's error text before it is stored (docs/reference.md#secrets): a receiver that
   * echoes its request in an error quotes the token it was given, and the database, its backups and a SQL query
   * must not hold it any more than an admin reply may.
   */
  mask?: (text: string) => string;
}

export interface DeliveryWorker {
  start(): void;
  /** Called after a commit: the new deliveries are due now. */
  notify(): void;
  /** Lets attempts in flight finish within `graceMs`, then aborts the rest and returns them to pending. */
  stop(graceMs?: number): Promise<void>;
  readonly running: boolean;
}

interface SinkLoop {
  name: string;
  sink: Sink;
  policy: DeliveryPolicy;
  wake: () => void;
  /**
   * Set by notify() and by a freed slot while the loop is busy, so a wake-up between a look and a sleep is not
   * missed.
   */
  woken: boolean;
  /** A refill of the slots freed in this turn is already scheduled. */
  refilling: boolean;
  /** The sink's `rate`, when it has one: the starts of its last window. */
  rate: RateWindow | undefined;
  /** Epoch ms until which a 429 met here holds the loop, before the store has recorded it (see attempt). */
  pausedUntil: number;
  /** Every attempt started and not yet recorded, with the controller of its claim: its slot is taken. */
  inFlight: Map<number, AbortController>;
  /** The claims whose attempts have not all settled: the loop ends only after them. */
  claims: Set<Promise<void>>;
  done: Promise<void>;
}

const SHUTDOWN = new Error('shutting down');

export function createDeliveryWorker({
  store,
  sinks,
  log,
  leaseMs = 60_000,
  idleMs = 1_000,
  onAttempt,
  mask,
}: WorkerOptions): DeliveryWorker {
  // A lease outlives the attempt's timeout, or a slow attempt would be taken over while it still runs.
  const leaseFor = (policy: DeliveryPolicy) => Math.max(leaseMs, policy.timeoutMs + 10_000);
  const loops: SinkLoop[] = [];
  let running = false;

  /**
   * Keeps up to `concurrency` attempts of one sink in flight at all times: a slot is claimed again as soon as its
   * attempt is recorded, whatever the others do, so one receiver that hangs on one record holds one slot until its
   * timeout, never the whole sink (docs/reference.md#sinks-and-delivery: at least once, and a slow sink must not stall
   * the rest). A claim asks for the free slots only, as replicas claim side by side from one PostgreSQL outbox.
   */
  async function runLoop(loop: SinkLoop): Promise<void> {
    while (running) {
      loop.woken = false;
      if (waitsForSlots(loop)) {
        await idle(loop);
        continue;
      }
      const waitMs = Math.max(loop.pausedUntil - Date.now(), loop.rate?.nextIn() ?? 0);
      if (waitMs > 0) {
        await idle(loop, waitMs);
        continue;
      }
      const free = Math.min(loop.policy.concurrency - loop.inFlight.size, loop.rate?.available() ?? Infinity);
      let claimed: ClaimedDelivery[] = [];
      try {
        claimed = await store.claimDeliveries(loop.name, free, leaseFor(loop.policy), loop.policy.paused);
      } catch (err) {
        log.error({ err, sink: loop.name }, 'cannot read the outbox');
      }
      // stop() came while the claim was on its way, or an attempt in flight met a 429 meanwhile: nothing was attempted,
      // so nothing is counted (docs/reference.md#what-every-sink-shares: the deliveries that wait spend no attempt).
      if (!running || loop.pausedUntil > Date.now()) {
        await release(claimed.map((d) => d.id));
        if (!running) break;
        continue;
      }
      if (claimed.length > 0) {
        // Counted as they start, which is now: every attempt of a claim is called in this turn (startClaim).
        loop.rate?.started(claimed.length);
        startClaim(loop, claimed);
      }
      // A full claim means more may be due: look again, for the slots that are still free.
      if (claimed.length === free) continue;
      // Woken while the claim was on its way (a commit, a freed slot): idle() would return at once, so the next due
      // time is not asked for. Under steady intake this saves a store round trip at nearly every claim.
      if (loop.woken) continue;
      const dueIn = await store.nextDueIn(loop.name, loop.policy.paused).catch(() => undefined);
      await idle(loop, Math.min(dueIn ?? idleMs, idleMs));
    }
    await Promise.all(loop.claims); // no claim starts once the loop has ended
  }

  /**
   * Every slot is taken, or slots freed in this turn are about to be refilled together (slotFreed): either way a
   * wake-up from notify() would only find nothing to claim yet.
   */
  function waitsForSlots(loop: SinkLoop): boolean {
    return loop.refilling || loop.inFlight.size >= loop.policy.concurrency;
  }

  /** Sleeps until woken (notify, a freed slot or stop), or `ms` have passed when given. */
  function idle(loop: SinkLoop, ms?: number): Promise<void> {
    if (loop.woken || !running) return Promise.resolve();
    // A plain timer, not an aborted sleep: notify() runs once per committed call, and an abort builds an error.
    return new Promise((resolve) => {
      const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
      loop.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Wakes the loop once for every slot freed in this turn, after the turn: a backlog drain whose attempts settle
   * together (the jsonl sink settles a whole write at once, and the store records their attempts in one batch)
   * refills them all with one claim and one store round trip, not one each; and that claim's deliveries reach
   * the sink in one turn again, to share its next write and datasync (src/sinks/jsonl/jsonl.ts).
   */
  function slotFreed(loop: SinkLoop): void {
    if (loop.refilling) return;
    loop.refilling = true;
    setImmediate(() => {
      loop.refilling = false;
      loop.woken = true;
      loop.wake();
    });
  }

  /**
   * The deliveries of one claim start together, so they share one deadline: one controller, one timer and one
   * abort listener for them all, which a backlog of hundreds per claim would otherwise pay for each (and an
   * EventTarget removes a listener by walking its list). Each attempt still has its whole timeout from its own
   * start, and every attempt is called in this one turn.
   */
  function startClaim(loop: SinkLoop, claimed: readonly ClaimedDelivery[]): void {
    const controller = new AbortController();
    const { signal } = controller;
    // A sink's own I/O may listen to it too, once per delivery: no limit to warn about.
    setMaxListeners(0, signal);
    const { timeoutMs } = loop.policy;
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    // Settles only by rejecting, when the signal aborts; each attempt races its sink against it.
    const aborted = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    );
    aborted.catch(() => undefined); // aborted after every attempt settled: nobody is waiting for it
    for (const delivery of claimed) loop.inFlight.set(delivery.id, controller);
    const settled: Promise<void> = Promise.all(
      claimed.map((delivery) => attempt(loop, delivery, signal, aborted)),
    ).then(() => {
      clearTimeout(timer);
      loop.claims.delete(settled);
    });
    loop.claims.add(settled);
  }

  async function release(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await store.releaseLeases(ids).catch((err) => log.error({ err }, 'cannot release delivery leases'));
  }

  async function attempt(
    loop: SinkLoop,
    delivery: ClaimedDelivery,
    signal: AbortSignal,
    aborted: Promise<never>,
  ): Promise<void> {
    const startedAt = new Date();
    const started = performance.now();
    let attemptLog: Logger | undefined;
    try {
      // A sink that ignores the signal cannot hang us: the race settles when the signal aborts.
      const delivered = await Promise.race([
        loop.sink.deliver(delivery.record, {
          attempt: delivery.attempt,
          idempotencyKey: idempotencyKey(delivery.record, delivery.sink),
          signal,
          // Made when a sink first logs: most never do, and a child logger per delivery shows in the profile.
          get log() {
            return (attemptLog ??= log.child({
              sink: delivery.sink,
              callId: delivery.record.id,
              attempt: delivery.attempt,
            }));
          },
        }),
        aborted,
      ]);
      const note =
        typeof (delivered as DeliveryResult | undefined)?.note === 'string'
          ? attemptError((delivered as DeliveryResult).note!, mask)
          : undefined;
      await finish(delivery, {
        startedAt: startedAt.toISOString(),
        durationMs: performance.now() - started,
        outcome: 'ok',
        note,
      });
    } catch (err) {
      if (signal.reason === SHUTDOWN) return; // stop() returns it to pending, uncounted
      const result = attemptOutcome(err, delivery.attempt, loop.policy.retry);
      // Held here at once, before the store records the wait for every replica: a claim on its way meanwhile is
      // released uncounted (runLoop).
      if (result.pauseSinkUntil !== undefined) loop.pausedUntil = Math.max(loop.pausedUntil, result.pauseSinkUntil);
      if (result.attempt.error !== undefined) result.attempt.error = attemptError(result.attempt.error, mask);
      const durationMs = performance.now() - started;
      await finish(
        delivery,
        { startedAt: startedAt.toISOString(), durationMs, ...result.attempt },
        result.retryAt,
        result.pauseSinkUntil,
      );
      log.warn(
        {
          sink: delivery.sink,
          callId: delivery.record.id,
          attempt: delivery.attempt,
          outcome: result.attempt.outcome,
          error: result.attempt.error,
        },
        'delivery attempt failed',
      );
    } finally {
      loop.inFlight.delete(delivery.id);
      if (running) slotFreed(loop);
    }
  }

  async function finish(
    delivery: ClaimedDelivery,
    result: AttemptResult,
    retryAt?: number,
    pauseSinkUntil?: number,
  ): Promise<void> {
    let recorded = false;
    try {
      recorded = await store.finishAttempt(delivery.id, delivery.attempt, result, retryAt, pauseSinkUntil);
    } catch (err) {
      // The lease expires and the delivery is attempted again: at least once, never lost.
      log.error({ err, sink: delivery.sink, callId: delivery.record.id }, 'cannot record a delivery attempt');
    }
    // After the store's write: what is told of an attempt (a delivery gone dead, to the alerts) is in the store.
    onAttempt?.({
      sink: delivery.sink,
      outcome: result.outcome,
      durationMs: result.durationMs,
      rateLimited: pauseSinkUntil !== undefined,
      recorded,
    });
  }

  return {
    get running() {
      return running;
    },
    start() {
      if (running) return;
      running = true;
      for (const [name, { sink, policy }] of sinks) {
        const rate = policy.rate && rateWindow(policy.rate);
        const loop: SinkLoop = {
          name,
          sink,
          policy,
          wake: () => {},
          woken: false,
          refilling: false,
          rate,
          pausedUntil: 0,
          inFlight: new Map(),
          claims: new Set(),
          done: Promise.resolve(),
        };
        loop.done = runLoop(loop);
        loops.push(loop);
      }
    },
    notify() {
      for (const loop of loops) {
        loop.woken = true;
        // It runs once per committed call: a loop whose slots are all taken is not woken only to sleep again.
        if (!waitsForSlots(loop)) loop.wake();
      }
    },
    async stop(graceMs = 10_000) {
      if (!running) return;
      running = false;
      for (const loop of loops) loop.wake();
      const all = Promise.all(loops.map((l) => l.done));
      const timedOut = await Promise.race([all.then(() => false), sleep(graceMs, true)]);
      if (timedOut) {
        const ids = loops.flatMap((l) => [...l.inFlight.keys()]);
        for (const loop of loops) for (const c of loop.inFlight.values()) c.abort(SHUTDOWN);
        await release(ids);
        await all;
      }
      loops.length = 0;
    },
  };
}

/**
 * docs/reference.md#sinks-and-delivery: `<record id>:<sink name>` for a record as received, `…:r<revision>` for an
 * edited one, so a repeat is dropped downstream and an edit is not.
 */
export function idempotencyKey(record: Pick<CallRecord, 'id' | 'revision'>, sink: string): string {
  return (record.revision ?? 1) > 1 ? `${record.id}:${sink}:r${record.revision}` : `${record.id}:${sink}`;
}
