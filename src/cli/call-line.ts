import type { CallRecord } from '../record.js';
import type { StoredCall } from '../store/admin-queries.js';

/**
 * One line of `callhook calls list` (docs/reference.md#command-line): tab-separated, the same columns on every line so
 * `cut -f` and a spreadsheet's import find each in its place, an empty field where a call has no value:
 *
 * id, received (in `timezone` with its offset), hook, status, name, number, outcome, dedup key, `+N duplicates`.
 *
 * The name, number and outcome are the recommended parameters (spec section 6.4) `first_name` and `last_name`,
 * `phone_number`, `call_outcome`, read as a `map` template reads a bare field (docs/reference.md#sinks-and-delivery):
 * in `data`, then in `extra`, so a hook that does not declare them shows what the sender sent.
 */
export function callLine({ record, status, duplicates }: StoredCall, received: (at: string) => string): string[] {
  const name = [field(record, 'first_name'), field(record, 'last_name')].filter((part) => part !== '').join(' ');
  return [
    record.id,
    received(record.received_at),
    record.hook,
    status,
    name,
    field(record, 'phone_number'),
    field(record, 'call_outcome'),
    record.dedup_key ?? '',
    duplicates > 0 ? `+${duplicates} duplicates` : '',
  ].map(oneLine);
}

function field({ data, extra }: CallRecord, name: string): string {
  const value = Object.hasOwn(data, name) ? data[name] : Object.hasOwn(extra, name) ? extra[name] : undefined;
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A tab or a line break in a value (a name, a summary sent as the outcome) would break the line or shift the columns. */
const oneLine = (text: string) => text.replace(/[\t\r\n]+/g, ' ');
