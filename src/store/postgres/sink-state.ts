import type pg from 'pg';
import { sinkStateOf } from '../sink-state.js';
import type { Store } from '../store.js';
import { pgText } from './client.js';

/**
 * The PostgreSQL store's `sink_state` (migration 6, docs/reference.md#what-every-sink-shares): one row a sink, shared
 * by every replica, so an operator's pause and a 429's wait hold wherever a delivery is claimed. The worker's writes
 * are parts of the claim statement (postgres/store.ts, from the fragment below) and of the finish statement
 * (postgres/finish.ts).
 */

/**
 * True while the sink `$sink` is held at `$now`: paused by an operator, or by `$default` (the config's `paused`)
 * when no operator ever said, or waiting out a 429. A missing row holds by the default alone.
 */
export const heldSql = (sink: string, now: string, pausedByDefault: string) => `coalesce(
  (SELECT coalesce(s.paused, ${pausedByDefault}) OR coalesce(s.paused_until > ${now}, false) FROM sink_state s WHERE s.sink = ${sink}),
  ${pausedByDefault})`;

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
