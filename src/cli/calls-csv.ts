import type { CallRecord } from '../record.js';

/**
 * `callhook calls export --format csv` (docs/reference.md#command-line): RFC 4180 CSV that a spreadsheet program opens
 * as written, one row a call.
 *
 * Columns: the record's own fields, then one column per `data` field any exported call has, named as the field, then
 * one per `extra` field, named `extra.<field>`, then `problems`. A declared parameter is lowercase snake_case
 * (docs/reference.md#normalising), so it never holds a dot and `extra.` columns cannot collide with it; a parameter
 * that shares a name with a fixed column (`source`, `id`) is named `data.<field>`, for the same reason.
 *
 * `received_at` is written as `time` writes it: in the config's `timezone` with its offset (cli/zoned-time.ts), the
 * instant the record holds, read by a person in the hours of their own day. The JSON lines export keeps the record as
 * stored, in UTC.
 */

/** Excel and LibreOffice read a CSV without it in the machine's legacy code page: `Aśha` comes out as `AÅ›ha`. */
export const BOM = '\uFEFF';

const LEADING = ['id', 'hook', 'dedup_key', 'received_at', 'source'] as const;
const TRAILING = ['problems'] as const;
const FIXED = new Set<string>([...LEADING, ...TRAILING]);

/** The `data` and `extra` field names seen so far, in the order first seen. */
export interface CsvColumns {
  data: Set<string>;
  extra: Set<string>;
}

export const csvColumns = (): CsvColumns => ({ data: new Set(), extra: new Set() });

/** Adds the fields of one record; export sees every record once before it writes the header. */
export function addColumns(columns: CsvColumns, record: CallRecord): void {
  for (const name of Object.keys(record.data)) columns.data.add(name);
  for (const name of Object.keys(record.extra)) columns.extra.add(name);
}

export function csvHeader(columns: CsvColumns): string {
  const data = [...columns.data].map((name) => (FIXED.has(name) ? `data.${name}` : name));
  return csvLine([...LEADING, ...data, ...[...columns.extra].map((name) => `extra.${name}`), ...TRAILING]);
}

export function csvRow(r: CallRecord, columns: CsvColumns, time: (at: string) => string): string {
  return csvLine([
    r.id,
    r.hook,
    r.dedup_key,
    time(r.received_at),
    r.source,
    ...[...columns.data].map((f) => (Object.hasOwn(r.data, f) ? r.data[f] : undefined)),
    ...[...columns.extra].map((f) => (Object.hasOwn(r.extra, f) ? r.extra[f] : undefined)),
    r.problems.map((p) => `${p.field}:${p.code}`).join(' '),
  ]);
}

function csvLine(values: readonly unknown[]): string {
  return `${values.map(cell).join(',')}\r\n`;
}

/**
 * One cell. A number or a boolean is written as JSON writes it and stays a number or a truth value in the sheet (a
 * negative amount `-250` is a number, which no spreadsheet runs). Text, and an `extra` object or array written as
 * JSON text, is neutralised when a spreadsheet would run it as a formula: `=`, `+`, `-`, `@`, tab or carriage
 * return first gets a leading `'` (OWASP "CSV injection"), so a caller's number `+919812345678` shows as text and
 * `=HYPERLINK(…)` said on a call is never run. null and missing are empty.
 */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
