import type Database from 'better-sqlite3';
import { type CallRecord, storedRecord } from '../../record.js';
import { timeBound } from '../admin-query.js';
import type { CallStatus } from '../calls.js';
import type { DeliveryState } from '../outbox.js';
import type { PeriodCalls } from '../period-calls.js';
import type { SqliteReader } from './reader.js';

/**
 * The SQLite store's part of a period's redelivery (store/period-calls.ts). The calls are read on the reader thread,
 * by the calls_received index: from the cursor's time on, a call of that very time only after the cursor's id, so the
 * index gives the range and only calls received in the same millisecond are sorted. The writes run on the store's
 * connection, one transaction a chunk, which the admin operation keeps small and spaces out
 * (admin/period-redelivery.ts), so the writer thread's commits get their turn between two.
 */

interface Row {
  record: string;
  status: CallStatus;
  delivery: DeliveryState | null;
}

export const PERIOD_SQL = {
  count: 'SELECT COUNT(*) AS n FROM calls WHERE received_at >= @from AND received_at < @to',
  calls: `SELECT c.record, c.status, d.state AS delivery FROM calls c
    LEFT JOIN deliveries d ON d.call_id = c.id AND d.sink = @sink
    WHERE c.received_at >= @afterAt AND (c.received_at > @afterAt OR c.id > @afterId) AND c.received_at < @to
    ORDER BY c.received_at, c.id LIMIT @limit`,
};

export function sqlitePeriod(db: Database.Database, reader: SqliteReader): PeriodCalls {
  // The WHERE of DO UPDATE leaves a pending or in-flight delivery as it is, and it then counts no change; a call that
  // is held or gone selects no row, and gets none.
  const redeliver = db.prepare(`
    INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
    SELECT id, @sink, 'pending', @now, @now, @now FROM calls WHERE id = @call_id AND status = 'accepted'
    ON CONFLICT (call_id, sink) DO UPDATE SET
      state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, lease_until = NULL, updated_at = excluded.updated_at
    WHERE deliveries.state IN ('done', 'dead')`);
  return {
    countPeriod: async (from, to) =>
      (
        await reader.all<{ n: number }>(PERIOD_SQL.count, { from: timeBound(from, 'from'), to: timeBound(to, 'to') })
      )[0]!.n,
    periodCalls: async ({ from, to, sink, after, limit }) => {
      // The bounds in the one form received_at is written in, so that comparing text compares times (admin-query.ts).
      const rows = await reader.all<Row>(PERIOD_SQL.calls, {
        sink,
        to: timeBound(to, 'to'),
        afterAt: after?.receivedAt ?? timeBound(from, 'from'),
        afterId: after?.id ?? '',
        limit,
      });
      return rows.map(({ record, status, delivery }) => ({
        record: storedRecord(JSON.parse(record) as CallRecord),
        status,
        delivery,
      }));
    },
    redeliverCalls: async (sink, callIds) =>
      callIds.length === 0
        ? 0
        : db
            .transaction(() => {
              const now = Date.now();
              let scheduled = 0;
              for (const id of new Set(callIds)) scheduled += redeliver.run({ call_id: id, sink, now }).changes;
              return scheduled;
            })
            .immediate(),
  };
}
