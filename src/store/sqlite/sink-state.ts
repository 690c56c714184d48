import type Database from 'better-sqlite3';
import type { SinkState } from '../sink-state.js';
import { SUCCESS_EVERY_MS, sinkStateOf } from '../sink-state.js';

/**
 * The SQLite store's `sink_state` (migration 6, docs/reference.md#queues-and-databases): one row a sink, read by its
 * primary key. The writes run where the store's writer runs (its thread), inside the group commit of the attempt or
 * claim they belong to; the reads run on whichever connection asks.
 */

const COLUMNS = `SELECT sink, paused, paused_changed_at AS pausedChangedAt, paused_until AS pausedUntil,
  last_success_at AS lastSuccessAt, last_error AS lastError, last_error_at AS lastErrorAt FROM sink_state`;

type Row = Parameters<typeof sinkStateOf>[0];

export interface SqliteSinkStateReads {
  get(sink: string): SinkState | undefined;
  all(): SinkState[];
}

export function sqliteSinkStateReads(db: Database.Database): SqliteSinkStateReads {
  const one = db.prepare(`${COLUMNS} WHERE sink = ?`);
  const every = db.prepare(`${COLUMNS} ORDER BY sink`);
  return {
    get: (sink) => {
      const row = one.get(sink) as Row | undefined;
      return row && sinkStateOf(row);
    },
    all: () => (every.all() as Row[]).map(sinkStateOf),
  };
}

export interface SqliteSinkStateWrites extends SqliteSinkStateReads {
  /** After an attempt: its success (at most once a second), or its error and a 429's wait. */
  afterAttempt(sink: string, ok: boolean, error: string | null, now: number, pauseUntil: number | undefined): void;
  setPaused(sink: string, paused: boolean, now: number): void;
  recordError(sink: string, error: string, now: number): void;
}

export function sqliteSinkStateWrites(db: Database.Database): SqliteSinkStateWrites {
  const stmts = {
    success: db.prepare(`
      INSERT INTO sink_state (sink, last_success_at) VALUES (@sink, @now)
      ON CONFLICT (sink) DO UPDATE SET last_success_at = excluded.last_success_at
      WHERE last_success_at IS NULL OR last_success_at <= excluded.last_success_at - ${SUCCESS_EVERY_MS}
        OR last_error_at >= last_success_at`),
    // A longer wait already running is kept: two 429s never shorten the pause.
    failure: db.prepare(`
      INSERT INTO sink_state (sink, last_error, last_error_at, paused_until) VALUES (@sink, @error, @now, @until)
      ON CONFLICT (sink) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at,
        paused_until = CASE WHEN excluded.paused_until > coalesce(paused_until, 0) THEN excluded.paused_until ELSE paused_until END`),
    paused: db.prepare(`
      INSERT INTO sink_state (sink, paused, paused_changed_at) VALUES (@sink, @paused, @now)
      ON CONFLICT (sink) DO UPDATE SET paused = excluded.paused, paused_changed_at = excluded.paused_changed_at`),
  };
  return {
    ...sqliteSinkStateReads(db),
    afterAttempt(sink, ok, error, now, pauseUntil) {
      if (ok) stmts.success.run({ sink, now });
      else stmts.failure.run({ sink, error, now, until: pauseUntil ?? null });
    },
    setPaused: (sink, paused, now) => void stmts.paused.run({ sink, paused: paused ? 1 : 0, now }),
    recordError: (sink, error, now) => void stmts.failure.run({ sink, error, now, until: null }),
  };
}
