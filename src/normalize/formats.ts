/**
 * String formats a body parameter may carry (docs/reference.md#normalising). Each returns the normalised
 * value, or undefined when the text is not in the format; none throws.
 */
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { z } from 'zod';

export { toCalendarDate } from './calendar-date.js';

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

/**
 * The region a number written without its country code is read in when the config names no `phone_region`
 * (docs/reference.md#normalising): the one default, for the config, normalisation and the admin's phone filter.
 */
export const DEFAULT_PHONE_REGION = 'IN' satisfies CountryCode;

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
