import { createHmac } from 'node:crypto';
import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js';
import { CallhookError } from '../errors.js';
import { DEFAULT_PHONE_REGION, isEmail, toE164 } from '../normalize/formats.js';

/**
 * The person an access or erasure request is about (docs/reference.md#erasure): a phone number read as intake reads
 * one, so any spelling of it finds them, or an e-mail address, compared trimmed and without regard to case.
 */

export type Person =
  | {
      kind: 'phone';
      /** E.164, as intake stores it. */
      value: string;
      /**
       * Every spelling of the number, as a regular expression that JavaScript and PostgreSQL read alike: its digits
       * with or without the country code (or `00`, `+`, `%2B` before it) or a leading 0, with any spaces, dashes, dots,
       * parentheses or their percent-encodings between them, and no digit on either side.
       */
      pattern: string;
    }
  | { kind: 'email'; value: string };

export interface PersonRequest {
  phone?: unknown;
  email?: unknown;
}

/** What may stand between two digits of a spelling: separators, as typed, in JSON and in a form's encoding. */
const SEP = '(?:[ .()+-]|%2[0-9A-Fa-f]|\\\\[nrt])*';

/** The person of a request; a 400 that says why for no person, both, or a value that cannot be read. */
export function readPerson({ phone, email }: PersonRequest, region: string = DEFAULT_PHONE_REGION): Person {
  const given = (v: unknown) => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
  if (given(phone) && given(email))
    throw new CallhookError('BAD_REQUEST', 'give the phone number or the e-mail address, not both');
  if (given(phone)) {
    if (typeof phone !== 'string') throw new CallhookError('BAD_REQUEST', 'phone must be a string');
    const e164 = toE164(phone, region as CountryCode);
    if (!e164)
      throw new CallhookError(
        'BAD_REQUEST',
        `"${phone}" cannot be read as a phone number (numbers without a country code are read in ${region})`,
      );
    return { kind: 'phone', value: e164, pattern: phonePattern(e164) };
  }
  if (given(email)) {
    if (typeof email !== 'string' || !isEmail(email))
      throw new CallhookError('BAD_REQUEST', `"${String(email)}" is not an e-mail address`);
    return { kind: 'email', value: email.trim().toLowerCase() };
  }
  throw new CallhookError('BAD_REQUEST', 'give the person’s phone number (phone) or e-mail address (email)');
}

/** The spellings of an E.164 number as one regular expression (Person.pattern). */
export function phonePattern(e164: string): string {
  const number = parsePhoneNumberFromString(e164);
  if (!number) throw new Error(`not an E.164 number: ${e164}`);
  const spaced = (digits: string) => [...digits].join(SEP);
  const country = `(?:\\+|%2[Bb]|00)?${SEP}${spaced(number.countryCallingCode)}`;
  return `(?<![0-9])(?:(?:${country}|0)${SEP})?${spaced(number.nationalNumber)}(?![0-9])`;
}

/** Whether `text` holds the person, by the rule the stores apply in SQL. */
export function holdsPerson(person: Person, text: string): boolean {
  return person.kind === 'phone' ? new RegExp(person.pattern).test(text) : text.toLowerCase().includes(person.value);
}

/**
 * The erasure log's key for a person (docs/reference.md#erasure): an HMAC of the normalised number or address with the
 * store's own key, so the log can answer "was this person erased" without holding who they are.
 */
export function personHash(person: Person, key: Uint8Array): string {
  return createHmac('sha256', key).update(`${person.kind}:${person.value}`).digest('hex');
}
