import type pg from 'pg';
import { SUCCESS_EVERY_MS, sinkStateOf } from '../sink-state.js';
import type { Store } from '../store.js';
import { pgText } from './client.js';

/**
 * The PostgreSQL store's `sink_state` (migration 6, docs/reference.md#what-every-sink-shares): one row a sink, shared
 * by every replica, so an operator's pause and a 429's wait hold wherever a delivery is claimed. The worker's writes
 * are parts of the claim and finish statements (postgres/store.ts), built from the fragments below.
 */

/**
 * True while the sink `$sink` is held at `$now`: paused by an operator, or by `$default` (the config's `paused`)
 * when no operator ever said, or waiting out a 429. A missing row holds by the default alone.
 */
export const heldSql = (sink: string, now: string, pausedByDefault: string) => `coalesce(
  (SELECT coalesce(s.paused, ${pausedByDefault}) OR coalesce(s.paused_until > ${now}, false) FROM sink_state s WHERE s.sink = ${sink}),
  ${pausedByDefault})`;

/**
 * The sink-state part of finishing an attempt, as CTEs reading the finished delivery from `d` (none when the
 * attempt was not ours to finish): its success at most once a second, or its error and a 429's wait. A success
 * inserts a missing row without locking an existing one, and updates an existing one only when its figure is a
 * second old, so concurrent finishes of one sink, on every replica, seldom queue on its row.
 */
export const finishSinkStateSql = ({
  outcome,
  now,
  error,
  pauseUntil,
}: {
  outcome: string;
  now: string;
  error: string;
  pauseUntil: string;
}) => `
  success_new AS (
    INSERT INTO sink_state (sink, last_success_at) SELECT sink, ${now} FROM d WHERE ${outcome} = 'ok'
    ON CONFLICT (sink) DO NOTHING),
  success_old AS (
    UPDATE sink_state s SET last_success_at = ${now} FROM d
    WHERE ${outcome} = 'ok' AND s.sink = d.sink AND (s.last_success_at IS NULL OR s.last_success_at <= ${now} - ${SUCCESS_EVERY_MS}
      OR s.last_error_at >= s.last_success_at)),
  failure AS (
    INSERT INTO sink_state AS s (sink, last_error, last_error_at, paused_until) SELECT sink, ${error}, ${now}, ${pauseUntil} FROM d
    WHERE ${outcome} <> 'ok'
    ON CONFLICT (sink) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at,
      paused_until = greatest(s.paused_until, excluded.paused_until))`;

export function postgresSinkState(pool: pg.Pool): Pick<Store, 'sinkStates' | 'setSinkPaused' | 'recordSinkError'> {
  return {
    sinkStates: async () => {
      const { rows } = await pool.query<Parameters<typeof sinkStateOf>[0]>(
        `SELECT sink, paused, paused_changed_at AS "pausedChangedAt", paused_until AS "pausedUntil",
           last_success_at AS "lastSuccessAt", last_error AS "lastError", last_error_at AS "lastErrorAt"
         FROM sink_state ORDER BY sink COLLATE "C"`,
      );
      return rows.map(sinkStateOf);
    },
    setSinkPaused: async (sink, paused) => {
      await pool.query(
        `INSERT INTO sink_state (sink, paused, paused_changed_at) VALUES ($1, $2, $3)
         ON CONFLICT (sink) DO UPDATE SET paused = excluded.paused, paused_changed_at = excluded.paused_changed_at`,
        [pgText(sink), paused, Date.now()],
      );
    },
    recordSinkError: async (sink, error) => {
      await pool.query(
        `INSERT INTO sink_state (sink, last_error, last_error_at) VALUES ($1, $2, $3)
         ON CONFLICT (sink) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at`,
        [pgText(sink), pgText(error), Date.now()],
      );
    },
  };
}
