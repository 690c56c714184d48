import { truncate } from '../shared/record-fields.js';
import type { HookSummary } from '../sink.js';

/**
 * What one call's row holds: the columns of the sheet, and each value as a cell the Sheets API writes with
 * `valueInputOption=USER_ENTERED` (docs/reference.md#crm-sinks), which reads what it is given as if typed into the
 * sheet.
 */

/** docs/reference.md#crm-sinks: the first column is always the record's id, under this header. */
export const ID_HEADER = 'callhook_id';

/** A cell as the API takes it: "supported value types are: bool, string, and double" (ValueRange.values). */
export type Cell = string | number | boolean;

/** "A cell can contain up to 50,000 characters" (https://support.google.com/drive/answer/37603). */
const CELL_CHARS = 50_000;

/**
 * Text a spreadsheet would not keep as the text it is, when typed: a formula (`=`, and `+`, `-`, `@` start one too:
 * docs/reference.md#crm-sinks), a number, a date, a time, a percentage or an amount (a phone `+91…`, an id `0042`,
 * `12:30`, `2026-11-21`, `₹499`), a month and a day (`Nov 21`), a boolean (`true`), and text already starting with the
 * apostrophe that would be taken as the marker. A leading `'` makes Sheets keep the rest as text; it is not part of the
 * cell's value, so it is not shown and not read back.
 */
const FORMULA = /^[=+\-@']/;
const NUMBER_LIKE =
  /^\s*(?:[(.]?\d|[$€£¥₹]\s*\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?[\s,/-]*\d)/i;
const BOOLEAN = /^\s*(?:true|false)\s*$/i;

export function cell(value: unknown): Cell {
  if (value === undefined || value === null) return ''; // "To set a cell to an empty value, set the string value to an empty string."
  if (typeof value === 'number') return Number.isFinite(value) ? value : text(String(value));
  if (typeof value === 'boolean') return value;
  return text(typeof value === 'string' ? value : JSON.stringify(value));
}

function text(value: string): string {
  const cut = truncate(value, CELL_CHARS - 1);
  return FORMULA.test(cut) || NUMBER_LIKE.test(cut) || BOOLEAN.test(cut) ? `'${cut}` : cut;
}

/**
 * The default columns after the id (docs/reference.md#crm-sinks): `received_at`, `hook`, then each declared parameter
 * of the hooks whose calls come to this sink, in declaration order, a parameter two hooks share once.
 */
export function defaultColumns(hooks: readonly HookSummary[] | undefined, sink: string): Record<string, string> {
  // A Map, then fromEntries: a parameter named `__proto__` is a column like any other, not an object's prototype.
  const columns = new Map([
    ['received_at', '{{ received_at }}'],
    ['hook', '{{ hook }}'],
  ]);
  for (const hook of hooks ?? []) {
    if (!hook.sinks.includes(sink)) continue;
    for (const parameter of hook.parameters) {
      if (parameter !== ID_HEADER && !columns.has(parameter)) columns.set(parameter, `{{ data.${parameter} }}`);
    }
  }
  return Object.fromEntries(columns);
}
