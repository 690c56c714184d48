import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallhookError } from '../../errors.js';
import {
  byDecodeURIComponent,
  decodeComponent,
  decodeUtf8,
  groupFields,
  parseQuery,
  parseUrlEncoded,
  quote,
} from './parse-query.js';

function caught(run: () => unknown): CallhookError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CallhookError);
    return error as CallhookError;
  }
  throw new Error('expected a CallhookError');
}

describe('parseQuery', () => {
  it('reads a query with or without its leading ?', () => {
    expect(parseQuery('?a=1&b=2')).toEqual({ a: '1', b: '2' });
    expect(parseQuery('a=1&b=2')).toEqual({ a: '1', b: '2' });
    expect(parseQuery('')).toEqual({});
    expect(parseQuery('?')).toEqual({});
  });

  it('turns + and %20 into spaces, and keeps an escaped plus', () => {
    expect(parseQuery('name=Asha+Rao&city=New%20Delhi&sum=1%2B1')).toEqual({
      name: 'Asha Rao',
      city: 'New Delhi',
      sum: '1+1',
    });
  });

  it('decodes unicode names and values', () => {
    const fields = { नाम: 'आशा', பெயர்: 'தமிழ்', emoji: '🙂👍🏽' };
    const search = new URLSearchParams(fields).toString();
    expect(parseQuery(search)).toEqual(fields);
  });

  it('skips empty pairs, gives a bare key the empty value, splits at the first =', () => {
    expect(parseQuery('&&a&&b=&c=x=y&')).toEqual({ a: '', b: '', c: 'x=y' });
  });

  it('keeps every value of a repeated key, in order', () => {
    expect(parseQuery('tag=a&x=1&tag=b&tag=c')).toEqual({ tag: ['a', 'b', 'c'], x: '1' });
  });

  it('keeps __proto__, constructor and prototype as own properties', () => {
    const fields = parseQuery('__proto__=x&constructor=y&prototype=z&__proto__=w');
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.keys(fields)).toEqual(['__proto__', 'constructor', 'prototype']);
    expect(Object.getOwnPropertyDescriptor(fields, '__proto__')?.value).toEqual(['x', 'w']);
    expect(fields.constructor).toBe('y');
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('prototype');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it.each([
    ['a byte that is not UTF-8', 'name=%FF'],
    ['a cut UTF-8 sequence', 'name=%E2%82'],
    ['a bad escape', 'name=100%'],
    ['a bad escape in a name', '%zz=1'],
    ['an encoded surrogate', 'x=%ED%A0%80'],
  ])('refuses %s with BAD_QUERY (400)', (_, search) => {
    const error = caught(() => parseQuery(search));
    expect(error.code).toBe('BAD_QUERY');
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/invalid percent-encoding/);
  });
});

describe('the shared urlencoded pieces', () => {
  it('reports a body error with the code it is given', () => {
    expect(caught(() => decodeComponent('%FF', 'BAD_BODY')).code).toBe('BAD_BODY');
  });

  it('decodes UTF-8 strictly, drops a BOM and keeps the decoder error as cause', () => {
    expect(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]), 'BAD_BODY')).toBe('a');
    const error = caught(() => decodeUtf8(new Uint8Array([0x61, 0xff]), 'BAD_BODY', 'field "a"'));
    expect(error.message).toMatch(/invalid UTF-8 in field "a"/);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it('groups repeated keys only', () => {
    expect(
      groupFields([
        ['a', 1],
        ['b', 2],
        ['a', 3],
      ]),
    ).toEqual({ a: [1, 3], b: 2 });
  });

  it('quotes a long fragment shortly', () => {
    expect(quote('x'.repeat(100))).toBe(`"${'x'.repeat(40)}…"`);
  });

  it('counts fields against the limit, skipping empty pairs', () => {
    const limits = { fields: 2, fieldSize: 10 };
    expect(parseUrlEncoded('a=1&&b=2&', 'BAD_BODY', limits)).toEqual({ a: '1', b: '2' });
    const error = caught(() => parseUrlEncoded('a=1&b=2&c=3', 'BAD_BODY', limits));
    expect([error.code, error.status]).toEqual(['BODY_TOO_LARGE', 413]);
    expect(error.message).toMatch(/more than 2 fields/);
  });

  it('measures a value in UTF-8 bytes against fieldSize', () => {
    const limits = { fields: 10, fieldSize: 6 };
    expect(parseUrlEncoded('a=%E0%A4%A8%E0%A4%BE', 'BAD_BODY', limits)).toEqual({ a: 'ना' });
    const error = caught(() => parseUrlEncoded('a=%E0%A4%A8%E0%A4%BEx', 'BAD_BODY', limits));
    expect([error.code, error.status]).toEqual(['BODY_TOO_LARGE', 413]);
    expect(error.message).toMatch(/field "a" is longer than 6 bytes/);
  });
});

describe('properties', () => {
  it('decodes every component as decodeURIComponent does, and refuses what it refuses', () => {
    const piece = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.constantFrom(
        '%',
        '%2',
        '%E2',
        '%82',
        '%AC',
        '%e2%82%ac',
        '%C3%A9',
        '%F0%9F%98%80',
        '%FF',
        '%00',
        '%2B',
        '+',
        'é',
        '😀',
        '%zz',
        'a',
      ),
    );
    const outcome = (decode: () => string) => {
      try {
        return decode();
      } catch (error) {
        return `refused ${(error as CallhookError).code}`;
      }
    };
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 8 }).map((p) => p.join('')),
        (raw) => {
          expect(outcome(() => decodeComponent(raw, 'BAD_BODY'))).toBe(
            outcome(() => byDecodeURIComponent(raw, 'BAD_BODY')),
          );
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('reads back whatever URLSearchParams writes', () => {
    const entries = fc.array(fc.tuple(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' })));
    fc.assert(
      fc.property(entries, (pairs) => {
        const expected = groupFields(pairs);
        expect(parseQuery(new URLSearchParams(pairs).toString())).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('either reads any string or refuses it with BAD_QUERY', () => {
    const search = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.array(fc.constantFrom('%', 'F', '0', '8', 'E2', 'C3', '+', '=', '&', 'a', '%E2%82')).map((s) => s.join('')),
    );
    fc.assert(
      fc.property(search, (text) => {
        try {
          parseQuery(text);
        } catch (error) {
          expect(error).toBeInstanceOf(CallhookError);
          expect((error as CallhookError).code).toBe('BAD_QUERY');
        }
      }),
      { numRuns: 3000 },
    );
  });
});
