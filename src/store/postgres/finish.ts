import pg from 'pg';
import type { AttemptResult, DeliveryState, Outbox } from '../outbox.js';
import { SUCCESS_EVERY_MS } from '../sink-state.js';
import { pgText } from './client.js';

/**
 * The delivery worker's finished attempts, grouped as SQLite groups them (sqlite/batch.ts): the attempts that finish
 * within one turn of the event loop are recorded by one statement, one round trip and one WAL flush. Committed one
 * statement each, they queued for the pool beside the intake during a storm (a jsonl sink settles hundreds of
 * deliveries in one write, and each of them then took a connection of its own: docs/performance.md#a-storm-on-postgresql).
 *
 * Only the lease holder of this very attempt moves a delivery on: a worker whose lease expired and was taken over
 * finds no row to update (the WHERE is re-checked once a concurrent claim commits), so nothing of its attempt is
 * written and it gets false. A batch that PostgreSQL refuses (a deadlock on two sinks' rows with another replica's
 * batch, a value a column refuses) records each attempt alone, so only one that fails on its own fails.
 */

export type Finish = Outbox['finishAttempt'];

/** Bounds one statement's parameters whatever the backlog: a turn with more finishes makes several. */
export const MAX_FINISHES = 500;

interface Pending {
  id: number;
  attempt: number;
  result: AttemptResult;
  retryAt?: number;
  pauseSinkUntil?: number;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * The attempts to record, one row each in the order they finished (`n`). The sink's state (sink-state.ts) is written
 * once per sink of the batch, from the attempts of it that were ours to record: its last success at most once a
 * second when all of them succeeded; otherwise its last error (the latest failure's, with the longest 429 wait, a
 * wait already running never cut short), and, when the batch's last word for the sink is a success, that success at
 * the same moment, so the sink does not read as failing while it delivers (isFailing). One statement touches each
 * sink's row once: PostgreSQL cannot change one row twice in a statement.
 */
const FINISH_MANY = `
  WITH b AS (
    SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::bigint[], $5::text[], $6::timestamptz[],
      $7::double precision[], $8::text[], $9::integer[], $10::bigint[], $11::text[]) WITH ORDINALITY
      AS b (id, attempt, state, next_attempt_at, error, started_at, duration_ms, outcome, http_status, pause_until, note, n)
  ),
  d AS (
    UPDATE deliveries SET state = b.state, next_attempt_at = b.next_attempt_at, lease_until = NULL, last_error = b.error,
      updated_at = $12::bigint
    FROM b WHERE deliveries.id = b.id AND deliveries.state = 'in_flight' AND deliveries.attempts = b.attempt
    RETURNING deliveries.id, deliveries.attempts, deliveries.sink, b.n, b.error, b.started_at, b.duration_ms, b.outcome,
      b.http_status, b.pause_until, b.note
  ),
  per_sink AS (
    SELECT sink, bool_or(outcome <> 'ok') AS failed, (array_agg(outcome ORDER BY n DESC))[1] = 'ok' AS ends_ok,
      (array_agg(error ORDER BY n DESC) FILTER (WHERE outcome <> 'ok'))[1] AS error, max(pause_until) AS pause_until
    FROM d GROUP BY sink
  ),
  success_new AS (
    INSERT INTO sink_state (sink, last_success_at) SELECT sink, $12::bigint FROM per_sink WHERE NOT failed
    ON CONFLICT (sink) DO NOTHING
  ),
  success_old AS (
    UPDATE sink_state s SET last_success_at = $12::bigint FROM per_sink p
    WHERE NOT p.failed AND s.sink = p.sink AND (s.last_success_at IS NULL OR s.last_success_at <= $12::bigint - ${SUCCESS_EVERY_MS}
      OR s.last_error_at >= s.last_success_at)
  ),
  failure AS (
    INSERT INTO sink_state AS s (sink, last_error, last_error_at, paused_until, last_success_at)
    SELECT sink, error, $12::bigint, pause_until, CASE WHEN ends_ok THEN $12::bigint END FROM per_sink WHERE failed
    ON CONFLICT (sink) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at,
      paused_until = greatest(s.paused_until, excluded.paused_until),
      last_success_at = coalesce(excluded.last_success_at, s.last_success_at)
  ),
  attempt_rows AS (
    INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status, error, note)
    SELECT id, attempts, started_at, duration_ms, outcome, http_status, error, note FROM d ORDER BY n
  )
  SELECT id, attempts FROM d`;

/** Records the attempts in one statement; returns the keys (`id:attempt`) of those that were ours to record. */
async function finishMany(pool: pg.Pool, batch: readonly Pending[]): Promise<Set<string>> {
  const now = Date.now();
  const column = <T>(pick: (p: Pending) => T) => batch.map(pick);
  const { rows } = await pool.query<{ id: number; attempts: number }>({
    // Named, so each pooled connection plans it once.
    name: 'callhook-finish-many',
    text: FINISH_MANY,
    values: [
      column((p) => p.id),
      column((p) => p.attempt),
      column((p) => stateAfter(p.result)),
      column((p) => p.retryAt ?? now),
      column((p) => pgText(p.result.error)),
      column((p) => p.result.startedAt),
      column((p) => p.result.durationMs),
      column((p) => p.result.outcome),
      column((p) => p.result.httpStatus ?? null),
      column((p) => p.pauseSinkUntil ?? null),
      column((p) => pgText(p.result.note)),
      now,
    ],
  });
  return new Set(rows.map((row) => keyOf(row.id, row.attempts)));
}

const keyOf = (id: number, attempt: number) => `${id}:${attempt}`;

const stateAfter = ({ outcome }: AttemptResult): DeliveryState =>
  outcome === 'ok' ? 'done' : outcome === 'dead' ? 'dead' : 'pending';

/** `finishAttempt` for the PostgreSQL store: the attempts of one turn recorded together. */
export function createFinishBatcher(pool: pg.Pool): Finish {
  const settle = (batch: readonly Pending[], recorded: ReadonlySet<string>) => {
    for (const p of batch) p.resolve(recorded.has(keyOf(p.id, p.attempt)));
  };

  async function record(batch: Pending[]): Promise<void> {
    try {
      settle(batch, await finishMany(pool, batch));
    } catch (err) {
      // The connection broke or the query timed out: whether it committed is unknown. Each attempt fails; its lease
      // expires and the delivery is made again (at least once). A batch PostgreSQL refused is tried one by one.
      if (!(err instanceof pg.DatabaseError) || batch.length === 1) {
        for (const p of batch) p.reject(err);
        return;
      }
      for (const p of batch) void record([p]);
    }
  }

  // The attempts of one turn go when it ends (setImmediate runs after the turn's I/O callbacks), or as soon as they
  // fill a statement.
  let gathering: Pending[] = [];
  const send = () => {
    const batch = gathering;
    gathering = [];
    if (batch.length > 0) void record(batch);
  };
  return (id, attempt, result, retryAt, pauseSinkUntil) =>
    new Promise<boolean>((resolve, reject) => {
      gathering.push({ id, attempt, result, retryAt, pauseSinkUntil, resolve, reject });
      if (gathering.length === 1) setImmediate(send);
      else if (gathering.length === MAX_FINISHES) send();
    });
}
