import { describe, expect, it } from 'vitest';
import { isMissing, toBoolean, toNumber, toText } from './coerce.js';

describe('toNumber', () => {
  it.each([
    [42, 42],
    [-0.5, -0.5],
    [' 42 ', 42],
    ['4.5e2', 450],
    ['-12.25', -12.25],
    ['0', 0],
    ['1E3', 1000],
    ['2e-2', 0.02],
    ['\t184\n', 184],
    // Amounts as callers write them (docs/reference.md#normalising; every form is tested in amount.test.ts).
    ['1,000', 1000],
    [' 5,00,000 ', 500000],
    ['₹499', 499],
    ['Rs. 1,299.50', 1299.5],
    ['2.3 lakh', 230000],
  ])('accepts %j as %j', (input, expected) => {
    expect(toNumber(input)).toBe(expected);
  });

  it.each([
    '',
    '   ',
    'abc',
    '1e999',
    '-1e999',
    '0x10',
    '012',
    '+5',
    '.5',
    '5.',
    '1,2,3',
    '12,34',
    '1 000',
    '₹4.5e2',
    'Infinity',
    'NaN',
    '12abc',
  ])('refuses the text %j', (input) => {
    expect(toNumber(input)).toBeUndefined();
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, true, false, null, undefined, [], {}, [1]])(
    'refuses the non-number %j',
    (input) => {
      expect(toNumber(input)).toBeUndefined();
    },
  );
});

describe('toBoolean', () => {
  it.each([
    [true, true],
    [false, false],
    [1, true],
    [0, false],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    [' true ', true],
    ['false', false],
    ['FaLsE', false],
    ['1', true],
    ['0', false],
    ['yes', true],
    ['YES', true],
    [' Yes', true],
    ['no', false],
    ['NO', false],
    ['No ', false],
  ])('reads %j as %j', (input, expected) => {
    expect(toBoolean(input)).toBe(expected);
  });

  it.each(['', 'y', 'n', 'on', 'off', 'maybe', '2', '1.0', 2, -1, 0.5, null, undefined, [], {}])(
    'refuses %j',
    (input) => {
      expect(toBoolean(input)).toBeUndefined();
    },
  );
});

describe('toText', () => {
  it('trims strings', () => {
    expect(toText('  Asha \n')).toBe('Asha');
  });

  it('writes finite numbers and booleans as text', () => {
    expect(toText(560001)).toBe('560001');
    expect(toText(1.5)).toBe('1.5');
    expect(toText(true)).toBe('true');
    expect(toText(false)).toBe('false');
  });

  it.each([Number.NaN, Number.NEGATIVE_INFINITY, null, undefined, [], ['a'], {}, { a: 1 }])('refuses %j', (input) => {
    expect(toText(input)).toBeUndefined();
  });
});

describe('isMissing', () => {
  it.each([undefined, null, '', '   ', '\n\t'])('treats %j as missing', (input) => {
    expect(isMissing(input)).toBe(true);
  });

  it.each([0, false, 'a', ' a ', [], {}, Number.NaN])('treats %j as present', (input) => {
    expect(isMissing(input)).toBe(false);
  });
});
