/**
 * Calendar dates as the sender writes them (docs/reference.md#normalising, `call_date` and `format: date`). Each reader
 * returns the date as `YYYY-MM-DD`, or undefined when the text is not a real date in a form it reads; none throws.
 */

// RFC 3339 section 5.6, with the space separator it allows and optional seconds; the offset is optional
// because a local date-time still names its date.
const DATE_OR_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-](\d{2}):(\d{2}))?)?$/;

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * The calendar date as written. A date-time gives its own date part, not the UTC date: the
 * call happened on the day the sender wrote, in the sender's zone ("23:30-05:00" is still that day).
 * `Date.parse` is not used because it rolls 2023-02-29 over to March 1st instead of refusing it.
 */
export function toCalendarDate(value: string): string | undefined {
  const match = DATE_OR_DATE_TIME.exec(value.trim());
  if (match === null) return undefined;
  const [, y, mo, d, hh, mi, ss, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hh !== undefined && (Number(hh) > 23 || Number(mi) > 59)) return undefined;
  // 60 is a leap second, which RFC 3339 allows.
  if (ss !== undefined && Number(ss) > 60) return undefined;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return undefined;
  return `${y}-${mo}-${d}`;
}

/**
 * Which comes first in the numeric day-month forms (docs/reference.md#normalising): the day, as in India, unless MDY.
 */
export const DATE_ORDERS = ['DMY', 'MDY'] as const;
export type DateOrder = (typeof DATE_ORDERS)[number];

/**
 * `21/11/2026`, `21-11-2026`, `21.11.2026`: the same separator twice and a four-digit year, since a two-digit
 * year would be a guess at the century. A one-digit day or month (`5/3/2026`) is read as well: with the order
 * fixed by the config it means one date only, and it is how people and the AI write the first days of a month.
 */
const NUMERIC = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})$/;
/** `21 Nov 2026`, `21 November 2026`: the month by name, so no order is needed; any case, spaced as written. */
const NAMED = /^(\d{1,2})\s+([A-Za-z]+)\s+(\d{4})$/;

const MONTH_NAMES = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
/**
 * The full name and its first three letters, the short form docs/normalising.md shows (`Nov`), and `Sept`, which is
 * September's short name in Indian and British English (as Intl's en-IN writes it); no other abbreviation.
 */
const MONTHS: ReadonlyMap<string, number> = new Map([
  ...MONTH_NAMES.flatMap((name, i): [string, number][] => [
    [name, i + 1],
    [name.slice(0, 3), i + 1],
  ]),
  ['sept', 9],
]);

/** The date as `YYYY-MM-DD` when it is on the calendar (no 31/02, no 29/02 outside a leap year). */
function calendarDate(year: string, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(year), month)) return undefined;
  return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/**
 * A `call_date` or `format: date` value (docs/reference.md#normalising): `YYYY-MM-DD` or an ISO date-time (its date as
 * written), else the day-first forms above, the numeric ones month first when `order` is MDY.
 */
export function readDate(value: string, order: DateOrder = 'DMY'): string | undefined {
  const text = value.trim();
  const iso = toCalendarDate(text);
  if (iso !== undefined) return iso;
  const numeric = NUMERIC.exec(text);
  if (numeric !== null) {
    const [, first = '', , second = '', year = ''] = numeric;
    const [day, month] = order === 'DMY' ? [first, second] : [second, first];
    return calendarDate(year, Number(month), Number(day));
  }
  const named = NAMED.exec(text);
  if (named === null) return undefined;
  const [, day = '', name = '', year = ''] = named;
  const month = MONTHS.get(name.toLowerCase());
  return month === undefined ? undefined : calendarDate(year, month, Number(day));
}
