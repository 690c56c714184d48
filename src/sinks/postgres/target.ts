import pg from 'pg';
import { PermanentError } from '../errors.js';
import { sqlState } from './errors.js';
import type { PostgresOptions } from './options.js';

/**
 * The table a `postgres` sink writes to, as found when the sink first connects
 * (docs/reference.md#queues-and-databases): in the connection's default schema, created there when it is callhook's own
 * and missing, with the type of each mapped column and a check that the key column can drop repeats. What goes wrong
 * here is said once per delivery, in PostgreSQL's words where it has them, and looked at again by the next delivery, so
 * a table fixed while the sink runs is used without a restart.
 */

export interface TargetColumn {
  name: string;
  /** json or jsonb (or a domain over one): the value goes as JSON, a string as a JSON string. */
  json: boolean;
  /** An array type: an array value goes as a PostgreSQL array, not as JSON text. */
  array: boolean;
}

export interface Target {
  /** `"schema"."table"`, quoted. */
  qualified: string;
  /** `schema.table`, for messages. */
  label: string;
  /** The mapped columns, in the order of the map. */
  columns: TargetColumn[];
}

/**
 * callhook's own table (docs/reference.md#queues-and-databases). NOT NULL where a record always has the field (section
 * 3).
 */
const createOwnTable = (qualified: string) => `
  CREATE TABLE IF NOT EXISTS ${qualified} (
    id uuid PRIMARY KEY,
    hook text NOT NULL,
    dedup_key text,
    received_at timestamptz NOT NULL,
    source text NOT NULL,
    revision integer NOT NULL,
    data jsonb NOT NULL,
    extra jsonb NOT NULL,
    problems jsonb NOT NULL
  )`;

/** The table's live columns with their base types; none when the table does not exist. */
const COLUMNS = `
  SELECT a.attname AS name, base.typname AS type, base.typcategory AS category
  FROM pg_attribute a
  JOIN pg_type t ON t.oid = a.atttypid
  JOIN pg_type base ON base.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
  WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`;

/**
 * A unique index on the key column alone, valid, on no expression and with no WHERE: the only kind that
 * `ON CONFLICT (<key_column>)` can use (PostgreSQL documentation, INSERT, "conflict_target"). A primary key is one.
 */
const KEY_INDEX = `
  SELECT 1 FROM pg_index i
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
  WHERE i.indrelid = to_regclass($1) AND i.indisunique AND i.indisvalid AND i.indnkeyatts = 1
    AND i.indpred IS NULL AND i.indexprs IS NULL AND a.attname = $2
  LIMIT 1`;

/**
 * Another replica created the same table at the same moment: CREATE TABLE IF NOT EXISTS checks before it writes the
 * catalog, so the loser meets the winner's rows there, as duplicate_table, duplicate_object (the table's row type)
 * or unique_violation on a catalog index, depending on where the two crossed.
 */
const CREATED_BESIDE = new Set(['42P07', '42710', '23505']);

export async function findTarget(
  client: pg.ClientBase,
  options: PostgresOptions,
  onCreated: (label: string) => void,
): Promise<Target> {
  const { table, keyColumn, columns, ownTable } = options;
  // The schema an unqualified CREATE TABLE would use; every statement names it, so the table created, checked
  // and written is one table even when another of the same name sits later on the search_path.
  const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
  const schema = rows[0]?.schema;
  if (!schema) throw new PermanentError('the connection has no default schema: no schema on its search_path exists');
  const qualified = `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;
  const label = `${schema}.${table}`;

  let found = await typesOf(client, qualified);
  if (found.size === 0) {
    if (!ownTable)
      throw new PermanentError(
        `table ${label} does not exist (with columns, callhook writes into a table of yours; names are matched as written, case and all)`,
      );
    // Created only when missing: CREATE TABLE IF NOT EXISTS asks for the CREATE privilege on the schema even
    // when the table is there, which a role that may only write into it lacks.
    try {
      await client.query(createOwnTable(qualified));
      onCreated(label);
    } catch (err) {
      if (!CREATED_BESIDE.has(sqlState(err) ?? '')) throw err;
    }
    found = await typesOf(client, qualified);
  }

  const targetColumns = columns.targets.map((name): TargetColumn => {
    const type = found.get(name);
    // PostgreSQL's own words (42703), said before any record is written.
    if (type === undefined) throw new PermanentError(`column "${name}" of relation "${label}" does not exist`);
    return { name, json: type.type === 'json' || type.type === 'jsonb', array: type.category === 'A' };
  });

  const key = await client.query(KEY_INDEX, [qualified, keyColumn]);
  if (key.rowCount === 0) {
    throw new PermanentError(
      `key_column "${keyColumn}" of table ${label} must be the primary key or carry a unique index (on that column alone, with no WHERE), so that a delivery made again meets its row`,
    );
  }
  return { qualified, label, columns: targetColumns };
}

async function typesOf(
  client: pg.ClientBase,
  qualified: string,
): Promise<Map<string, { type: string; category: string }>> {
  const { rows } = await client.query<{ name: string; type: string; category: string }>(COLUMNS, [qualified]);
  return new Map(rows.map((row) => [row.name, { type: row.type, category: row.category }]));
}
