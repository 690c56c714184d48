/**
 * Calendar dates as the sender writes them (contract section 3, `call_date` and `format: date`). Each reader
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
