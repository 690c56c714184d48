import pg from 'pg';
import { ConfigError } from '../../config.js';
import { RetryableError } from '../errors.js';
import { hostAndPort } from '../shared/address.js';
import { lazyValue } from '../shared/lazy-connection.js';
import { defineSinkType, type Sink } from '../sink.js';
import { onClient } from './client.js';
import { deliveryError, schemaChanged, sqlState } from './errors.js';
import { postgresOptions } from './options.js';
import { type Statement, statementFor } from './statement.js';
import { findTarget, type Target } from './target.js';

/**
 * Writes each record as a row of a PostgreSQL table (docs/reference.md#queues-and-databases), exactly once downstream:
 * every delivery is one INSERT … ON CONFLICT on the key column, so a delivery made again leaves the one row it made.
 * Without `columns` the table is callhook's own, created when missing; with them it is the user's. A person's erasure
 * deletes the rows of their records by the column that holds the record id (docs/reference.md#erasure).
 *
 * `url` (or the deployment's DATABASE_URL) holds the database's password: it is a secret by the URL rule
 * (secret-values.ts), and no message here quotes more of it than host and port.
 */

/**
 * Connections kept open between deliveries, as many as the default concurrency (policy.ts), so that at the default
 * no delivery waits for one; a sink set to more deliveries at once queues the rest on these, each a short INSERT.
 */
const POOL_SIZE = 8;
/** How long a delivery waits to connect (or for a free connection) before it counts as a connection error. */
const CONNECT_TIMEOUT_MS = 10_000;

export const postgresSink = defineSinkType({
  type: 'postgres',
  options: postgresOptions,
  open(options, { name, log, databaseUrl }) {
    const url = options.url ?? databaseUrl;
    if (url === undefined) {
      throw new ConfigError(
        `sink "${name}" (postgres): url is not set, and there is no DATABASE_URL (database_url in the config file) for it to default to`,
      );
    }
    const where = hostAndPort(url, { defaultPort: 5432 });
    // Nothing connects here: a database that is down at start-up must not stop start-up (section 9); the pool
    // opens connections as deliveries ask, and replaces one that failed.
    const pool = new pg.Pool({
      connectionString: url,
      max: POOL_SIZE,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Kept open however long the calls take to come (section 9: opened once and reused, closed by close()),
      // rather than pg's 10 s, after which a quiet line would connect afresh for each call; TCP keepalive notices
      // a server that went away meanwhile.
      idleTimeoutMillis: 0,
      keepAlive: true,
      application_name: `callhook sink ${name}`,
    });
    // An idle connection whose server went away emits 'error' on the pool; unheard, it would end the process. The
    // next delivery on it fails on its own and is retried.
    pool.on('error', () => undefined);
    // Looked at when the sink first connects, and again after a failure or a change of the table under it. The
    // pool is the sink's connection (it opens, reuses and replaces its own); this is only what was found through it.
    const target = lazyValue(() =>
      onClient(pool, undefined, (client) =>
        findTarget(client, options, (label) =>
          log.info({ sink: name, table: label }, 'postgres sink created its table'),
        ),
      ),
    );
    let closing: Promise<void> | undefined;

    /** Runs one statement on the table the sink found, and fails as a delivery does. */
    const run = async (statementOf: (table: Target) => Statement, signal: AbortSignal): Promise<pg.QueryResult> => {
      // Said as the other sinks say it, rather than as pg words an ended pool.
      if (closing !== undefined) throw deliveryError(new Error('the sink is closed'), where);
      const table = await target.get().catch((err: unknown) => {
        throw deliveryError(err, where);
      });
      const statement = statementOf(table);
      try {
        return await onClient(pool, signal, (client) => client.query(statement.text, statement.values));
      } catch (err) {
        if (!schemaChanged(err)) throw deliveryError(err, where);
        target.forget(table);
        const error = deliveryError(err, where);
        // callhook's own table dropped while the sink runs: the next attempt creates it again.
        if (options.ownTable && sqlState(err) === '42P01') throw new RetryableError(error.message, { cause: err });
        throw error;
      }
    };

    const sink: Sink = {
      async deliver(record, { signal }) {
        await run((table) => statementFor(record, table, options), signal);
      },
      async probe() {
        await target.get().catch((err: unknown) => {
          throw deliveryError(err, where);
        });
      },
      async close() {
        // pg refuses a second end(); shutdown paths may close twice.
        closing ??= pool.end();
        await closing;
      },
    };
    // A table where no column holds the record id alone has no way to find a person's rows: without erase(), the
    // erasure lists the sink and the record ids it received, for the operator (docs/reference.md#erasure).
    const { idColumn } = options;
    if (idColumn) {
      sink.erase = async (recordIds, { signal }) => {
        if (recordIds.length === 0) return 0;
        const values = recordIds.map(idColumn.value);
        const result = await run((table) => eraseStatement(table, idColumn.name, values), signal);
        return result.rowCount ?? 0;
      };
    }
    return sink;
  },
});

/**
 * The rows of these records, by the column that holds their id: `= ANY($1)` takes the column's own type, so the key's
 * index finds them. json has no equality operator, so a json(b) column is compared as jsonb.
 */
function eraseStatement(table: Target, column: string, values: string[]): Statement {
  const name = pg.escapeIdentifier(column);
  const json = table.columns.find((c) => c.name === column)?.json ?? false;
  return json
    ? {
        text: `DELETE FROM ${table.qualified} WHERE (${name})::jsonb = ANY($1::jsonb[])`,
        values: [values.map((value) => JSON.stringify(value))],
      }
    : { text: `DELETE FROM ${table.qualified} WHERE ${name} = ANY($1)`, values: [values] };
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default postgresSink;
