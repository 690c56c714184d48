import { z } from 'zod';
import { type CompiledMap, compileMap, idOnly, mapSchema } from '../shared/template.js';

/**
 * The options of the `postgres` sink (docs/reference.md#queues-and-databases), checked once at start-up: `url` (the
 * deployment's DATABASE_URL when left out, which only the factory knows), `table`, `columns` and `key_column`.
 */

export const DEFAULT_TABLE = 'callhook_calls';
export const DEFAULT_KEY_COLUMN = 'id';
/** The column whose higher value lets a record replace its row (docs/reference.md#queues-and-databases). */
export const REVISION_COLUMN = 'revision';

/**
 * The table callhook creates when no `columns` are given, as the record's fields (docs/reference.md#the-record and
 * docs/reference.md#queues-and-databases); each a lone placeholder, so a value keeps its JSON type and jsonb columns
 * get the JSON itself.
 */
export const DEFAULT_COLUMNS: Readonly<Record<string, string>> = Object.fromEntries(
  ['id', 'hook', 'dedup_key', 'received_at', 'source', 'revision', 'data', 'extra', 'problems'].map((field) => [
    field,
    `{{ ${field} }}`,
  ]),
);

/**
 * A plain SQL identifier: it is quoted all the same (pg's escapeIdentifier), so it is used exactly as written,
 * case and all, but a name that would need quoting to mean anything is more likely a typo or an attempt at SQL
 * than a table's name. PostgreSQL cuts a longer name to NAMEDATALEN - 1 = 63 bytes, which would be another table.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_IDENTIFIER_BYTES = 63;

function identifierProblem(name: string): string | undefined {
  if (!IDENTIFIER.test(name))
    return `"${name}" is not a plain SQL identifier (letters, digits and _, not starting with a digit)`;
  if (Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES)
    return `"${name}" is longer than ${MAX_IDENTIFIER_BYTES} bytes, which PostgreSQL would cut`;
  return undefined;
}

const identifier = z.string().superRefine((name, ctx) => {
  const problem = identifierProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** Never echoes the value: the URL may hold the database's password. */
const url = z.string().refine((value) => /^postgres(ql)?:\/\//.test(value) && URL.canParse(value), {
  error: 'url must be a postgres:// or postgresql:// URL',
});

const columns = mapSchema.superRefine((map, ctx) => {
  for (const column of map.targets) {
    const problem = identifierProblem(column);
    if (problem) ctx.addIssue({ code: 'custom', path: [column], message: `column ${problem}` });
  }
});

const rawOptions = z.strictObject({
  url: url.optional(),
  table: identifier.default(DEFAULT_TABLE),
  columns: columns.optional(),
  key_column: identifier.optional(),
});

export interface PostgresOptions {
  /** Undefined: the deployment's DATABASE_URL, given to the factory (SinkContext.databaseUrl). */
  url: string | undefined;
  table: string;
  keyColumn: string;
  /** Column → template; the record's own fields when no `columns` were given. */
  columns: CompiledMap;
  /** True without `columns`: the table is callhook's, created when missing. */
  ownTable: boolean;
  /**
   * Whether a record of a higher revision replaces its row: always in callhook's table, with a `revision` column in the
   * user's.
   */
  replacesOnRevision: boolean;
  /**
   * The column that holds the record's id, by which an erasure finds a person's rows (docs/reference.md#erasure), and
   * its value for an id; undefined when no column's template is the id alone, and the sink then cannot erase.
   */
  idColumn: IdColumn | undefined;
}

export interface IdColumn {
  name: string;
  value(id: string): string;
}

/** The key column when it holds the id (its index finds the rows), else the first column that does. */
function idColumnOf(columns: CompiledMap, keyColumn: string): IdColumn | undefined {
  for (const name of [keyColumn, ...columns.targets]) {
    const text = columns.sources[name];
    const value = text === undefined ? undefined : idOnly(text);
    if (value) return { name, value };
  }
  return undefined;
}

export const postgresOptions = rawOptions.transform((options, ctx): PostgresOptions => {
  const { url, table, columns: given, key_column: keyColumn } = options;
  if (given === undefined) {
    // callhook's own table has `id` as its primary key: another key would name a column it never made unique.
    if (keyColumn !== undefined && keyColumn !== DEFAULT_KEY_COLUMN) {
      ctx.addIssue({
        code: 'custom',
        path: ['key_column'],
        message: `key_column can only be "${DEFAULT_KEY_COLUMN}" without columns: callhook's own table is keyed by the record's id`,
      });
      return z.NEVER;
    }
    const columns = compileMap(DEFAULT_COLUMNS);
    return {
      url,
      table,
      keyColumn: DEFAULT_KEY_COLUMN,
      columns,
      ownTable: true,
      replacesOnRevision: true,
      idColumn: idColumnOf(columns, DEFAULT_KEY_COLUMN),
    };
  }
  const key = keyColumn ?? DEFAULT_KEY_COLUMN;
  if (!given.targets.includes(key)) {
    // A key left to the column's default (a serial, a fresh uuid) differs on every repeat: ON CONFLICT would
    // never meet one, and section 9 promises one row per delivery, always.
    ctx.addIssue({
      code: 'custom',
      path: ['columns'],
      message: `columns must map the key column "${key}" (key_column), whose value makes a repeat meet its row`,
    });
    return z.NEVER;
  }
  return {
    url,
    table,
    keyColumn: key,
    columns: given,
    ownTable: false,
    replacesOnRevision: given.targets.includes(REVISION_COLUMN) && key !== REVISION_COLUMN,
    idColumn: idColumnOf(given, key),
  };
});
