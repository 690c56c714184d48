import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { toE164 } from '../../normalize/formats.js';

/**
 * Phone numbers as a service stores them (as someone typed them) against a record's E.164, for every sink that
 * looks a caller up by number (the calling service's tags, the CRMs of docs/reference.md#crm-sinks).
 */

/**
 * Two are the same when their digits are (`+91 98123-45678` and `919812345678`), or when the stored one, read as
 * a national number of the record's country, gives the record's E.164 (`098123 45678`).
 */
export function samePhone(theirs: string | undefined, ours: string): boolean {
  if (!theirs) return false;
  const digits = (value: string) => value.replace(/\D/g, '');
  if (digits(theirs) !== '' && digits(theirs) === digits(ours)) return true;
  const country = parsePhoneNumberFromString(ours)?.country;
  return country !== undefined && toE164(theirs, country) === ours;
}

/**
 * The spellings of an E.164 number a person is likely to have typed: as it is, its national significant digits,
 * and the national and international formats (`+91 98123 45678`, `098123 45678`, `9812345678`).
 */
export function phoneSpellings(e164: string): { national: string | undefined; spellings: string[] } {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed) return { national: undefined, spellings: [e164] };
  const national = String(parsed.nationalNumber);
  const spellings = [e164, parsed.formatInternational(), parsed.formatNational(), national];
  return { national, spellings: [...new Set(spellings)] };
}
