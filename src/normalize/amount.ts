/**
 * Amounts as callers say them and the AI writes them down (docs/reference.md#normalising, `number`): digits grouped
 * with commas in the international or the Indian way, a currency sign or code before or after, and the Indian scale
 * words lakh and crore after the number. Plain JSON-grammar text is read by `toNumber` (coerce.ts) before this.
 *
 * The reading is strict on purpose: a value that could mean two things is refused (it becomes a problem that
 * carries the value as received), never guessed. So:
 * - a minus sign goes first, touching what follows: `-₹1,200.50`, `-1,200 INR`, `-2 lakh`; not `₹-1,200`;
 * - decimals follow the digits with a point (`5,00,000.75`); a decimal comma (`12,99`) is a comma out of place;
 * - an exponent (`4.5e2`) is JSON grammar only, never beside grouping, a currency or a scale word;
 * - one currency at most, before the number or after it (after the scale word: `2 lakh INR`), spelled as listed.
 */

/** docs/reference.md#normalising's list, spelled as it spells them (only the scale words are read in any case). */
const CURRENCIES: readonly string[] = ['₹', 'Rs', 'Rs.', 'INR', '$', 'USD', '€', 'EUR', '£', 'GBP', 'AED']
  // Longest first, so "Rs." is taken whole and not as "Rs" followed by ".499".
  .toSorted((a, b) => b.length - a.length);

/** How many decimal places each scale word moves the point: a lakh is 10^5, a crore 10^7. */
const SCALES: ReadonlyMap<string, number> = new Map([
  ['lakh', 5],
  ['lakhs', 5],
  ['lac', 5],
  ['lacs', 5],
  ['crore', 7],
  ['crores', 7],
  ['cr', 7],
]);

/**
 * The digits before the point: plain (JSON grammar, no leading zero), or grouped with commas.
 * International: a first group of 1–3 digits, then groups of 3 (`1,234,567`).
 * Indian: the last group of 3, groups of 2 before it, a first group of 1–2 digits (`5,00,000`, `12,34,567`).
 * Anything else with a comma (`1,2,3`, `12,34`, `1,23,4567`, `123,45,678`) is neither, so not a number.
 */
const DIGITS = /^(0|[1-9]\d*|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d?(?:,\d{2})+,\d{3})(?:\.(\d+))?$/;

function stripPrefix(text: string): [currency: boolean, rest: string] {
  const currency = CURRENCIES.find((c) => text.startsWith(c));
  return currency === undefined ? [false, text] : [true, text.slice(currency.length).trimStart()];
}

function stripSuffix(text: string): string {
  const currency = CURRENCIES.find((c) => text.endsWith(c));
  return currency === undefined ? text : text.slice(0, -currency.length).trimEnd();
}

const isLetter = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));

/**
 * The scale word at the end, if any, and the text before it. Scanned by hand, not with a regex such as
 * /\s*([a-z]+)$/, which would retry from every position and take quadratic time on a long run of letters.
 */
function stripScale(text: string): [shift: number, rest: string] | undefined {
  let start = text.length;
  while (isLetter(text[start - 1])) start -= 1;
  if (start === text.length) return [0, text];
  const shift = SCALES.get(text.slice(start).toLowerCase());
  return shift === undefined ? undefined : [shift, text.slice(0, start).trimEnd()];
}

/**
 * The integer and fraction digits times 10^shift, written out as decimal text: the point is moved in the text,
 * so `2.3 lakh` is exactly "230000" and `Number` rounds once, where 2.3 * 100000 would give 229999.99999999997.
 */
function shifted(int: string, fraction: string, shift: number): string {
  const digits = int + fraction;
  const point = int.length + shift;
  if (digits.length <= point) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The number an amount's text says, or undefined when it is not one of the forms above. */
export function toAmount(value: string): number | undefined {
  let text = value.trim();
  const negative = text.startsWith('-');
  if (negative) {
    text = text.slice(1);
    // "- 499" is not a minus sign on a number; "--499" fails below, as DIGITS has no sign.
    if (text !== text.trimStart()) return undefined;
  }
  const [prefixed, afterPrefix] = stripPrefix(text);
  const scaled = stripScale(prefixed ? afterPrefix : stripSuffix(afterPrefix));
  if (scaled === undefined) return undefined;
  const [shift, number] = scaled;
  const match = DIGITS.exec(number);
  if (match === null) return undefined;
  const [, grouped = '', fraction = ''] = match;
  const n = Number(`${negative ? '-' : ''}${shifted(grouped.replaceAll(',', ''), fraction, shift)}`);
  // Hundreds of digits overflow to Infinity, which no JSON consumer can hold (as "1e999" in coerce.ts).
  return Number.isFinite(n) ? n : undefined;
}
