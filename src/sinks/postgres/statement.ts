import pg from 'pg';
import type { CallRecord } from '../../record.js';
import { PermanentError } from '../errors.js';
import { type PostgresOptions, REVISION_COLUMN } from './options.js';
import type { Target, TargetColumn } from './target.js';

/**
 * The one statement a delivery runs (docs/reference.md#queues-and-databases): an INSERT keyed on the key column, so a
 * delivery made again (after a crash, a redeliver, a retry whose reply was lost) leaves one row. A repeat changes
 * nothing; where the row carries a revision, a record of a higher one (an edited call, section 11) replaces the mapped
 * columns, and a lower one, an older revision's delivery arriving late, changes nothing either.
 */

export interface Statement {
  text: string;
  values: unknown[];
}

export function statementFor(
  record: CallRecord,
  target: Target,
  options: Pick<PostgresOptions, 'columns' | 'keyColumn' | 'replacesOnRevision'>,
): Statement {
  const { columns, keyColumn, replacesOnRevision } = options;
  const rendered = columns.render(record);
  if (rendered[keyColumn] === undefined || rendered[keyColumn] === null) {
    // Without a key the row would take the column's default, and a repeat would make a second row.
    throw new PermanentError(
      `the key column "${keyColumn}" has no value for this record: its template (columns.${keyColumn}) found nothing`,
    );
  }
  const values: unknown[] = [];
  // A column whose lone placeholder found nothing takes its default (section 9); DEFAULT in the VALUES list, so
  // a replaced row gets it too, as a row inserted afresh would.
  const slots = target.columns.map((column) => {
    if (!(column.name in rendered)) return 'DEFAULT';
    values.push(parameter(rendered[column.name], column));
    return `$${values.length}`;
  });
  const names = target.columns.map((column) => pg.escapeIdentifier(column.name));
  const key = pg.escapeIdentifier(keyColumn);
  let onConflict = `ON CONFLICT (${key}) DO NOTHING`;
  if (replacesOnRevision) {
    const revision = pg.escapeIdentifier(REVISION_COLUMN);
    // Only the mapped columns are replaced: a column the map leaves out (a consumer's own `processed_at`) is the
    // consumer's, kept as it is.
    const sets = names.filter((name) => name !== key).map((name) => `${name} = excluded.${name}`);
    onConflict = `ON CONFLICT (${key}) DO UPDATE SET ${sets.join(', ')} WHERE cur.${revision} < excluded.${revision}`;
  }
  return {
    text: `INSERT INTO ${target.qualified} AS cur (${names.join(', ')}) VALUES (${slots.join(', ')}) ${onConflict}`,
    values,
  };
}

/**
 * A value as the column takes it. Sent as text, PostgreSQL reads it with the column's own type, so a type mismatch
 * (text into an integer column) is refused in its words (22P02), a permanent error. U+0000 is the one character
 * PostgreSQL's text and jsonb cannot hold (22021, 22P05): it becomes U+FFFD, the replacement character, rather than
 * making the whole call undeliverable.
 */
function parameter(value: unknown, column: TargetColumn): unknown {
  if (value === null) return null;
  // A json(b) column gets the value as JSON: a string as a JSON string, a number as a number (section 9).
  if (column.json) return JSON.stringify(value, withoutNul);
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD');
  // pg sends a JavaScript array as an array literal: right for an array column, not for text or anything else.
  if (Array.isArray(value) && column.array)
    return value.map((item) => (typeof item === 'string' ? item.replaceAll('\u0000', '\uFFFD') : item));
  if (typeof value === 'object') return JSON.stringify(value, withoutNul);
  return value;
}

function withoutNul(_key: string, value: unknown): unknown {
  return typeof value === 'string' ? value.replaceAll('\u0000', '\uFFFD') : value;
}
