import { TEST_SOURCES } from '../record.js';
import type { RetryQuery } from './admin-queries.js';

/**
 * The checks both stores make on an admin query before it reaches SQL, so SQLite and PostgreSQL read the same
 * input the same way (and a bad value fails with a message that names it, rather than as a database error).
 */

export const DEFAULT_PAGE = 100;

/** A page size: a positive integer (SQLite would read a negative LIMIT as "no limit", PostgreSQL refuses it). */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new Error(`store: "limit" must be a positive integer, got ${limit}`);
  return limit;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})?$/;
const OFFSET = /T.*(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * A `from`/`to` bound of listCalls as the ISO text the stores hold (`Date#toISOString`, UTC). A date is its
 * midnight UTC, and a timestamp without an offset is read as UTC, as received_at is always written. SQLite compares
 * this text with the stored text, which orders as time only because both have the same fixed form; PostgreSQL
 * reads it as a timestamptz that no session time zone can reinterpret.
 */
export function timeBound(value: string | undefined, name: 'from' | 'to'): string | undefined {
  if (value === undefined) return undefined;
  let ms = NaN;
  if (DATE.test(value)) ms = Date.parse(`${value}T00:00:00Z`);
  else if (TIMESTAMP.test(value)) ms = Date.parse(OFFSET.test(value) ? value : `${value}Z`);
  // Date.parse rolls 2026-02-30 over into March; a day that does not exist is refused instead.
  const day = value.slice(0, 10);
  if (Number.isNaN(ms) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
    throw new Error(`store: "${name}" must be a date (YYYY-MM-DD) or an ISO timestamp, got ${JSON.stringify(value)}`);
  }
  return new Date(ms).toISOString();
}

/** Which state a bulk retry takes; in_flight and done are refused even when a caller gets past the types. */
export function retryState(state: RetryQuery['state']): 'dead' | 'pending' {
  if (state === undefined || state === 'dead' || state === 'pending') return state ?? 'dead';
  throw new Error(`store: a retry takes dead or pending deliveries, not ${JSON.stringify(state)}`);
}

/** Sink names once each: one statement may not touch the same (call, sink) row twice. */
export const uniqueSinks = (sinks: readonly string[]): string[] => [...new Set(sinks)];

/**
 * The calls that are not test traffic (docs/reference.md#test-traffic), as both stores write it: the very term of the
 * partial index `calls_live` (migration 9 of each), which a planner uses only when it finds it in a query's WHERE.
 */
export const NOT_TEST = `source NOT IN (${TEST_SOURCES.map((s) => `'${s}'`).join(', ')})`;

/**
 * The `platform` filter's value for the calling service's calls, which name no platform
 * (docs/reference.md#other-voice-platforms): no platform is called that.
 */
export const NO_PLATFORM = 'none';
