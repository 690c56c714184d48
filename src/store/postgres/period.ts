import type pg from 'pg';
import { type CallRecord, storedRecord } from '../../record.js';
import { timeBound } from '../admin-query.js';
import type { CallStatus } from '../calls.js';
import type { DeliveryState } from '../outbox.js';
import type { PeriodCalls } from '../period-calls.js';
import { pgText } from './client.js';

/**
 * The PostgreSQL store's part of a period's redelivery (store/period-calls.ts), as SQLite's: the calls read by the
 * calls_received index from the cursor on, and each chunk's deliveries written in one statement, which every replica's
 * claims see as soon as it commits.
 */

interface Row {
  record: CallRecord;
  status: CallStatus;
  delivery: DeliveryState | null;
}

export const PERIOD_SQL = {
  count:
    'SELECT count(*)::bigint AS n FROM calls WHERE received_at >= $1::timestamptz AND received_at < $2::timestamptz',
  calls: `SELECT c.record, c.status, d.state AS delivery FROM calls c
    LEFT JOIN deliveries d ON d.call_id = c.id AND d.sink = $1
    WHERE c.received_at >= $2::timestamptz AND (c.received_at > $2::timestamptz OR c.id > $3)
      AND c.received_at < $4::timestamptz
    ORDER BY c.received_at, c.id LIMIT $5`,
  // KEY SHARE keeps a purge from deleting a call between this read and the delivery's foreign key check; a call
  // purged or held meanwhile selects no row, and gets no delivery. The WHERE of DO UPDATE leaves a pending or in-flight
  // delivery as it is, and it then counts no row.
  redeliver: `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
    SELECT id, $1, 'pending', $2, $2, $2 FROM calls WHERE id = ANY($3::text[]) AND status = 'accepted'
    ORDER BY id FOR KEY SHARE
    ON CONFLICT (call_id, sink) DO UPDATE SET
      state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, lease_until = NULL, updated_at = excluded.updated_at
    WHERE deliveries.state IN ('done', 'dead')`,
};

export function postgresPeriod(pool: pg.Pool): PeriodCalls {
  return {
    countPeriod: async (from, to) =>
      (await pool.query<{ n: number }>(PERIOD_SQL.count, [timeBound(from, 'from'), timeBound(to, 'to')])).rows[0]!.n,
    periodCalls: async ({ from, to, sink, after, limit }) => {
      const { rows } = await pool.query<Row>(PERIOD_SQL.calls, [
        pgText(sink),
        after?.receivedAt ?? timeBound(from, 'from'),
        pgText(after?.id ?? ''),
        timeBound(to, 'to'),
        limit,
      ]);
      return rows.map(({ record, status, delivery }) => ({ record: storedRecord(record), status, delivery }));
    },
    redeliverCalls: async (sink, callIds) => {
      const ids = [...new Set(callIds)].map((id) => pgText(id));
      if (ids.length === 0) return 0;
      const { rowCount } = await pool.query(PERIOD_SQL.redeliver, [pgText(sink), Date.now(), ids]);
      return rowCount ?? 0;
    },
  };
}
