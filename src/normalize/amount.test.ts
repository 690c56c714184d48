import { describe, expect, it } from 'vitest';
import { toAmount } from './amount.js';

describe('toAmount: digits grouped with commas (docs/reference.md#normalising)', () => {
  it.each([
    ['1,234', 1234],
    ['12,345', 12345],
    ['123,456', 123456],
    ['1,234,567', 1234567],
    ['1,000,000.50', 1000000.5],
    [' 1,234 ', 1234],
  ])('reads the international grouping %j as %j', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  it.each([
    ['5,00,000', 500000],
    ['1,00,000', 100000],
    ['12,34,567', 1234567],
    ['1,00,00,000', 10000000],
    ['99,99,99,999', 999999999],
    ['5,00,000.75', 500000.75],
  ])('reads the Indian grouping %j as %j', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  it.each([
    '1,2,3',
    '12,34',
    '1,23,4567',
    '123,45,678',
    '1,234,56,789',
    '12,34,5678',
    '1,000,00',
    '1,0000',
    ',100',
    '100,',
    '1,,000',
    '0,123',
    '01,234',
    '1 ,234',
    '1, 234',
    '12,99',
    '1.234,56',
    '1,234.5,6',
    '1,234.',
  ])('refuses the comma out of place in %j', (input) => {
    expect(toAmount(input)).toBeUndefined();
  });
});

describe('toAmount: a currency sign or code before or after', () => {
  it.each([
    ['₹499', 499],
    ['₹ 499', 499],
    ['Rs 499', 499],
    ['Rs. 499', 499],
    ['Rs.499', 499],
    ['INR 499', 499],
    ['INR499', 499],
    ['$12.50', 12.5],
    ['USD 12.50', 12.5],
    ['€20', 20],
    ['EUR 20', 20],
    ['£7.99', 7.99],
    ['GBP 7.99', 7.99],
    ['AED 150', 150],
    ['499 INR', 499],
    ['499₹', 499],
    ['499 Rs.', 499],
    ['12.50 USD', 12.5],
    ['₹5,00,000', 500000],
    ['Rs. 1,299.50', 1299.5],
    ['$1,234,567', 1234567],
  ])('reads %j as %j', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  it.each([
    '₹',
    'INR',
    '₹ ₹499',
    '₹499 INR',
    'Rs.. 499',
    // Spelled as docs/normalising.md lists them: only the scale words are read in any case.
    'rs 499',
    'inr 499',
    'Rupees 499',
    '499 rupees',
    'CHF 20',
    '¥500',
    '₹ 1,00,000/-',
    '₹4.5e2',
    '₹.5',
    '₹5.',
    '₹012',
  ])('refuses %j', (input) => {
    expect(toAmount(input)).toBeUndefined();
  });
});

describe('toAmount: lakh and crore after a number, any case', () => {
  it.each([
    ['2 lakh', 200000],
    ['2 Lakh', 200000],
    ['2 LAKH', 200000],
    ['2 lakhs', 200000],
    ['2 lac', 200000],
    ['3 lacs', 300000],
    ['2lakh', 200000],
    ['1.5 crore', 15000000],
    ['1.5 Crores', 15000000],
    ['1.5 cr', 15000000],
    ['1.5 CR', 15000000],
    ['1,500 crore', 15000000000],
    ['₹2 lakh', 200000],
    ['Rs. 1.5 crore', 15000000],
    ['2 lakh INR', 200000],
    ['0.5 lakh', 50000],
    ['0 lakh', 0],
  ])('reads %j as %j', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  // Each of these is off by a rounding error when multiplied as floats (2.3 * 100000 is 229999.99999999997).
  it.each([
    ['2.3 lakh', 2.3, 1e5, 230000],
    ['1.15 lakh', 1.15, 1e5, 115000],
    ['4.35 lakh', 4.35, 1e5, 435000],
    ['1.005 crore', 1.005, 1e7, 10050000],
  ])('scales %j exactly in decimal', (input, n, scale, expected) => {
    expect(n * scale).not.toBe(expected);
    expect(toAmount(input)).toBe(expected);
  });

  it.each([
    ['1.23456 lakh', 123456],
    ['1.234567 lakh', 123456.7],
    ['1.23456789 crore', 12345678.9],
    ['0.000001 crore', 10],
    ['12,34,567.891 lakh', 123456789100],
  ])('moves the point of %j past every digit it has', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  it.each([
    'lakh',
    'cr',
    '2 lakh lakh',
    '2 thousand',
    '2k',
    '2 million',
    '2 lakhh',
    'lakh 2',
    '2 INR lakh',
    '1e2 lakh',
    '.5 lakh',
    '2 lakh ₹ INR',
  ])('refuses %j', (input) => {
    expect(toAmount(input)).toBeUndefined();
  });
});

describe('toAmount: a minus sign goes first, touching what follows', () => {
  it.each([
    ['-1,200.50', -1200.5],
    ['-₹1,200.50', -1200.5],
    ['-Rs. 499', -499],
    ['-499 INR', -499],
    ['-5,00,000', -500000],
    ['-2.3 lakh', -230000],
  ])('reads %j as %j', (input, expected) => {
    expect(toAmount(input)).toBe(expected);
  });

  it.each(['₹-499', 'Rs. -499', '- 499', '--499', '+₹499', '+1,234', '499-', '(499)', '−499'])(
    'refuses %j',
    (input) => {
      expect(toAmount(input)).toBeUndefined();
    },
  );
});

describe('toAmount on long text', () => {
  it('refuses an amount whose digits overflow a double', () => {
    expect(toAmount(`${'9'.repeat(400)} lakh`)).toBeUndefined();
    expect(toAmount(`1${',000'.repeat(200)}`)).toBeUndefined();
  });

  // No timed assertion (the machines are shared): a reader that backtracked on these would not finish within the
  // test's own time-out; how long it takes is the benchmarks' business.
  it('answers on a long run of letters or digits', () => {
    expect(toAmount(`${'a'.repeat(500_000)}1`)).toBeUndefined();
    expect(toAmount(`1${'a'.repeat(500_000)}`)).toBeUndefined();
    expect(toAmount(`${'1,00'.repeat(200_000)}x`)).toBeUndefined();
  });
});
