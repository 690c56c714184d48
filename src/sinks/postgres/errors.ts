import pg from 'pg';
import { PermanentError, RetryableError } from '../errors.js';

/**
 * What a PostgreSQL failure means for a delivery (docs/reference.md#queues-and-databases): a constraint or type error,
 * or anything else the server says of the statement itself, fails the same way every time; a connection error, or a
 * server that cannot take the write now, may succeed later. SQLSTATE classes from PostgreSQL's documentation, Appendix
 * A "PostgreSQL Error Codes".
 */

/** Classes whose errors say nothing against the statement: trying it again later may succeed. */
const RETRYABLE_CLASSES = new Map([
  ['08', 'connection exception'],
  // 25006 read_only_sql_transaction: a standby answering at the primary's address during a failover.
  ['25', 'invalid transaction state'],
  ['40', 'transaction rollback (serialization failure, deadlock)'],
  ['53', 'insufficient resources (disk full, too many connections)'],
  ['55', 'object not in prerequisite state (a lock not available)'],
  ['57', 'operator intervention (shutdown, cancelled)'],
  ['58', 'system error'],
  ['XX', 'internal error'],
]);

/** undefined_table, undefined_column, and an ON CONFLICT target no unique index matches (any more). */
const SCHEMA_CHANGED = new Set(['42P01', '42703', '42P10']);

/**
 * The SQLSTATE of an error the server sent. Only of those: a socket error's `code` is Node's (`EPIPE` has five
 * letters too), and says the connection failed.
 */
export function sqlState(err: unknown): string | undefined {
  return err instanceof pg.DatabaseError ? err.code : undefined;
}

/** The table or its columns changed under the sink since it looked (a table dropped, a column renamed). */
export function schemaChanged(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && SCHEMA_CHANGED.has(code);
}

/**
 * The error a delivery throws for `err`, its message PostgreSQL's own with its SQLSTATE and detail, prefixed with
 * `where` (host and port: never the URL, which may hold the password). A client-side failure without a SQLSTATE
 * (refused, reset, timed out, "Connection terminated") is a connection error.
 */
export function deliveryError(err: unknown, where: string): RetryableError | PermanentError {
  // The sink's own findings about the table (target.ts), said as the server's are.
  if (err instanceof PermanentError) return new PermanentError(`postgres ${where}: ${err.message}`, { cause: err });
  if (err instanceof RetryableError) return new RetryableError(`postgres ${where}: ${err.message}`, { cause: err });
  const message = err instanceof Error ? err.message || err.name : String(err);
  const code = sqlState(err);
  const detail = err instanceof pg.DatabaseError ? err.detail : undefined;
  const text = `postgres ${where}: ${message}${code ? ` (SQLSTATE ${code})` : ''}${detail ? `: ${detail}` : ''}`;
  if (code === undefined || RETRYABLE_CLASSES.has(code.slice(0, 2))) return new RetryableError(text, { cause: err });
  return new PermanentError(text, { cause: err });
}
