import type { CallRecord } from '../record.js';
import type { CallStatus } from './calls.js';
import type { DeliveryState } from './outbox.js';

/**
 * What a period's redelivery to one sink asks of the store (docs/reference.md#a-period-to-one-sink: `calls redeliver --sink
 * NAME --from DATE`): the calls received in the period, a chunk at a time, each with the state of its delivery to that
 * sink, and deliveries made for the ones that are to go. Which ones go is the admin operation's to decide
 * (admin/period-redelivery.ts: the sink's route, as at intake); the store only reads and writes, each chunk in a
 * transaction short enough to leave the intake's commits their turn.
 */

/** Where a walk through a period is: the last call read, by its place in the order (received_at, then id). */
export interface PeriodCursor {
  receivedAt: string;
  id: string;
}

export interface PeriodQuery {
  /** `received_at` within [from, to): ISO timestamps, as listCalls takes them. */
  from: string;
  to: string;
  /** The sink whose delivery of each call is read with it. */
  sink: string;
  /** The calls after this one; from the period's start without it. */
  after?: PeriodCursor;
  limit: number;
}

export interface PeriodCall {
  record: CallRecord;
  status: CallStatus;
  /** The call's delivery to the sink asked about, null when it has none. */
  delivery: DeliveryState | null;
}

export interface PeriodCalls {
  /** How many calls were received in [from, to): read from the received_at index. */
  countPeriod(from: string, to: string): Promise<number>;
  /**
   * The calls received in the period, in the order received (then by id), up to `limit` after the cursor, each with
   * its delivery to `sink`. Read off the event loop where the store can.
   */
  periodCalls(query: PeriodQuery): Promise<PeriodCall[]>;
  /**
   * Sends these calls to `sink`, in one transaction: a missing delivery is created, a done or dead one made pending
   * again with a fresh attempt count (a deliberate resend, under the same idempotency key as any redelivery); a pending
   * or in-flight one is left as it is, and so is a call that is held or no longer stored. Returns how many deliveries
   * became pending.
   */
  redeliverCalls(sink: string, callIds: readonly string[]): Promise<number>;
}

/** The cursor after a call. */
export const cursorAfter = ({ record }: PeriodCall): PeriodCursor => ({
  receivedAt: record.received_at,
  id: record.id,
});
