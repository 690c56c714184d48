import type { CallRecord } from '../record.js';

/**
 * What the delivery worker asks of the store: due deliveries leased to it, each attempt recorded, leases given back on
 * shutdown, how long to sleep. A sink's state (docs/reference.md#queues-and-databases) is written on the way, in the
 * same write as the attempt, or on its own when the sink could not even be opened.
 */

/** Where an outbox row is: waiting (due now or later), leased to a worker, delivered, or given up on. */
export type DeliveryState = 'pending' | 'in_flight' | 'done' | 'dead';

export interface ClaimedDelivery {
  id: number;
  sink: string;
  /** 1 for the first attempt; counts every attempt made, including one cut short by a crash. */
  attempt: number;
  record: CallRecord;
}

export interface AttemptResult {
  startedAt: string;
  durationMs: number;
  outcome: 'ok' | 'retry' | 'dead';
  httpStatus?: number;
  error?: string;
  /** What a successful attempt says it did, when a sink says so (sink.ts `DeliveryResult`). */
  note?: string;
}

export interface Outbox {
  /**
   * Leases up to `limit` due deliveries of one sink; an expired lease counts as due. None while the sink is held
   * (sink-state.ts: paused by an operator, or by `pausedByDefault` when no operator ever said, or waiting out a
   * 429), checked in the claim itself, so no claim that starts after a pause is committed spends an attempt.
   */
  claimDeliveries(sink: string, limit: number, leaseMs: number, pausedByDefault?: boolean): Promise<ClaimedDelivery[]>;
  /**
   * Records the attempt and moves the delivery on: done, back to pending at `retryAt`, or dead. Only while the delivery
   * is still in flight as this attempt: a worker whose lease expired and was taken over changes nothing (and gets
   * false). In the same write it keeps the sink's state: its last success or last error, and, for a 429,
   * `pauseSinkUntil`, which holds every delivery of the sink on every replica
   * (docs/reference.md#what-every-sink-shares).
   */
  finishAttempt(
    deliveryId: number,
    attempt: number,
    result: AttemptResult,
    retryAt?: number,
    pauseSinkUntil?: number,
  ): Promise<boolean>;
  /** Puts leased deliveries back to pending without counting an attempt (used on shutdown). */
  releaseLeases(deliveryIds: readonly number[]): Promise<void>;
  /**
   * Milliseconds until the next delivery of `sink` is due, or undefined when none is pending or the sink is paused;
   * while it waits out a 429, not before the wait ends.
   */
  nextDueIn(sink: string, pausedByDefault?: boolean): Promise<number | undefined>;
  /** The sink's last error when there was no attempt to record it with: a sink that could not be opened. */
  recordSinkError(sink: string, error: string): Promise<void>;
}
