/**
 * String formats a body parameter may carry (contract section 3). Each returns the normalised
 * value, or undefined when the text is not in the format; none throws.
 */
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { z } from 'zod';

/**
 * The default ("min") metadata is used on purpose: the "max" set also checks number-type ranges,
 * which rejects real numbers in newly allocated ranges until the package is updated. A stored
 * number that is plausible is worth more than a dropped one; the raw value is kept either way.
 */
export function toE164(value: string, region: CountryCode): string | undefined {
  // extract: false makes the whole text the number, so "call 98123 45678 now" is refused
  // instead of quietly mined; the library still handles spaces, dashes, brackets and "00"/"011".
  const phone = parsePhoneNumberFromString(value.trim(), { defaultCountry: region, extract: false });
  return phone?.isValid() ? phone.number : undefined;
}

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

const emailSchema = z.email();

export function isEmail(value: string): boolean {
  return emailSchema.safeParse(value.trim()).success;
}

/**
 * The WHATWG parser accepts "http:example.com" and "https:/x" as http URLs, which a person would
 * not call a link; the explicit "scheme://" prefix is asked for before the parser checks the rest.
 */
const HTTP_PREFIX = /^https?:\/\//i;

export function isHttpUrl(value: string): boolean {
  const text = value.trim();
  if (!HTTP_PREFIX.test(text) || /\s/.test(text)) return false;
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** The declared spelling of the value that matches ignoring case and surrounding spaces. */
export function toEnum(value: string, values: readonly string[]): string | undefined {
  const wanted = value.trim().toLowerCase();
  return values.find((v) => v.trim().toLowerCase() === wanted);
}
