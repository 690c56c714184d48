import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toAmount } from './amount.js';
import { toNumber } from './coerce.js';

/**
 * Properties of the amount readings of docs/reference.md#normalising, each checked against an oracle written another
 * way: Intl's own grouping for `en-IN` and `en-US`, and a split on commas for where a comma may stand.
 */

const integer = fc.bigInt({ min: 0n, max: 10n ** 18n });
const fraction = fc.option(fc.stringMatching(/^\d{1,6}$/), { nil: undefined });
const CURRENCIES = ['₹', 'Rs', 'Rs.', 'INR', '$', 'USD', '€', 'EUR', '£', 'GBP', 'AED'];

const plain = (n: bigint, f: string | undefined) => (f === undefined ? String(n) : `${n}.${f}`);

describe('amount properties', () => {
  it('any integer grouped the Indian or the international way reads as its plain digits', () => {
    fc.assert(
      fc.property(integer, fraction, fc.constantFrom('en-IN', 'en-US'), (n, f, locale) => {
        const grouped = n.toLocaleString(locale);
        const text = f === undefined ? grouped : `${grouped}.${f}`;
        expect(toNumber(text)).toBe(Number(plain(n, f)));
      }),
      { numRuns: 1000 },
    );
  });

  it('a currency before or after, spaced or not, and a leading minus change nothing but the sign', () => {
    fc.assert(
      fc.property(
        integer,
        fraction,
        fc.constantFrom(...CURRENCIES),
        fc.boolean(),
        fc.constantFrom('', ' '),
        fc.boolean(),
        (n, f, currency, before, space, negative) => {
          const number = `${n.toLocaleString('en-IN')}${f === undefined ? '' : `.${f}`}`;
          const amount = before ? `${currency}${space}${number}` : `${number}${space}${currency}`;
          const expected = Number(plain(n, f));
          expect(toAmount(`${negative ? '-' : ''}${amount}`)).toBe(negative ? -expected : expected);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('lakh and crore scale exactly: the point moves in the text, never through a float product', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 8n }),
        fc.stringMatching(/^\d{1,5}$/),
        fc.constantFrom('lakh', 'Crore', 'CR', 'lacs'),
        (n, f, word) => {
          const places = /^l/i.test(word) ? 5 : 7;
          // An integer whatever the fraction, since the fraction has at most 5 digits: BigInt says which.
          const expected = n * 10n ** BigInt(places) + BigInt(f.padEnd(places, '0'));
          expect(toAmount(`${n}.${f} ${word}`)).toBe(Number(expected));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a comma stands only where one of the two groupings puts it', () => {
    // Digits with commas put anywhere, compared with a rule written on the groups between the commas.
    const withCommas = fc
      .array(fc.stringMatching(/^[1-9]\d{0,3}$|^\d{1,4}$/), { minLength: 2, maxLength: 5 })
      .map((groups) => groups.join(','));
    const allowed = (text: string) => {
      const [first = '', ...rest] = text.split(',');
      const last = rest.at(-1) ?? '';
      if (first.startsWith('0')) return false;
      const international = first.length <= 3 && rest.every((g) => g.length === 3);
      const indian = first.length <= 2 && last.length === 3 && rest.slice(0, -1).every((g) => g.length === 2);
      return international || indian;
    };
    fc.assert(
      fc.property(withCommas, (text) => {
        const read = toNumber(text);
        if (allowed(text)) expect(read).toBe(Number(text.replaceAll(',', '')));
        else expect(read).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });
});
