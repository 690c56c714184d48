import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalJsonByHand, contentHash, dedupKey, recordContentHash } from './dedup-key.js';

describe('canonicalJson', () => {
  it('sorts keys recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it('gives the same text whatever the insertion order', () => {
    expect(canonicalJson({ x: 1, y: 2 })).toBe(canonicalJson({ y: 2, x: 1 }));
  });

  it('orders keys by code point, not by UTF-16 unit', () => {
    // U+FF5E is one unit, 0xFF5E; U+1F600 starts with the unit 0xD83D, which sorts lower by unit.
    expect(canonicalJson({ '\u{1F600}': 1, '\uFF5E': 2, a: 3 })).toBe('{"a":3,"\uFF5E":2,"\u{1F600}":1}');
  });

  it('writes an own __proto__ key as data', () => {
    const value = JSON.parse('{"__proto__":{"polluted":1},"a":1}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"polluted":1},"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ignores inherited properties', () => {
    const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
    child.own = 2;
    expect(canonicalJson(child)).toBe('{"own":2}');
  });

  it('follows JSON.stringify for scalars, undefined and toJSON', () => {
    expect(canonicalJson('a"\u0001')).toBe(JSON.stringify('a"\u0001'));
    expect(canonicalJson(-0)).toBe('0');
    expect(canonicalJson(1e21)).toBe('1e+21');
    expect(canonicalJson(Number.NaN)).toBe('null');
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson([undefined, () => 1])).toBe('[null,null]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ at: new Date('2026-11-21T10:00:00Z') })).toBe('{"at":"2026-11-21T10:00:00.000Z"}');
  });

  it('refuses cycles but not shared values', () => {
    const shared = { a: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"a":1},{"a":1}]');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow('cyclic');
  });
});

describe('dedupKey', () => {
  const fields = ['call_id', 'order_id'];

  it('uses the first present field, from data before extra', () => {
    expect(dedupKey(fields, { order_id: 'ORD-1' }, { call_id: 'c-9' })).toBe('call_id:c-9');
    expect(dedupKey(fields, { order_id: ' ORD-1 ' }, {})).toBe('order_id:ORD-1');
    expect(dedupKey(['order_id'], { order_id: 'A' }, { order_id: 'B' })).toBe('order_id:A');
  });

  it('writes numbers and booleans as text', () => {
    expect(dedupKey(fields, { call_id: 12345 }, {})).toBe('call_id:12345');
    expect(dedupKey(['flag'], {}, { flag: false })).toBe('flag:false');
  });

  it('skips missing and structured values', () => {
    expect(dedupKey(fields, {}, { call_id: '  ', order_id: 'ORD-2' })).toBe('order_id:ORD-2');
    expect(dedupKey(fields, {}, { call_id: null, order_id: ['x'] })).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(dedupKey(fields, {}, { call_id: { id: 1 } })).toMatch(/^sha256:/);
  });

  it('does not read fields through the prototype chain', () => {
    expect(dedupKey(['constructor', 'toString'], {}, {})).toMatch(/^sha256:/);
  });

  it('hashes the canonical data and extra when no field is present', () => {
    const data = { first_name: 'Asha', call_duration: 184 };
    const extra = { campaign: 'diwali' };
    const expected = createHash('sha256')
      .update('{"data":{"call_duration":184,"first_name":"Asha"},"extra":{"campaign":"diwali"}}')
      .digest('hex');
    expect(dedupKey(fields, data, extra)).toBe(`sha256:${expected}`);
    expect(dedupKey([], { call_duration: 184, first_name: 'Asha' }, extra)).toBe(`sha256:${expected}`);
  });

  it('tells data from extra in the hash', () => {
    expect(dedupKey([], { a: '1' }, {})).not.toBe(dedupKey([], {}, { a: '1' }));
  });

  it('takes the first entry whose fields are all present, a composite one as "<f1>+<f2>:<v1>|<v2>"', () => {
    const entries = [['phone_number', 'call_date'], 'order_id'];
    expect(dedupKey(entries, { phone_number: '+919812345678', call_date: '2026-11-21', order_id: 'O-1' }, {})).toBe(
      'phone_number+call_date:+919812345678|2026-11-21',
    );
    // One field of the list missing: the list gives no key, the next entry does.
    expect(dedupKey(entries, { phone_number: '+919812345678', order_id: 'O-1' }, {})).toBe('order_id:O-1');
    expect(dedupKey([['a', 'b']], { a: 'x' }, { b: 7 })).toBe('a+b:x|7');
  });

  it('escapes | and \\ in a composite key, so two different pairs of values never share one', () => {
    const one = dedupKey([['a', 'b']], { a: 'x|y', b: 'z' }, {});
    const two = dedupKey([['a', 'b']], { a: 'x', b: 'y|z' }, {});
    expect(one).toBe('a+b:x\\|y|z');
    expect(two).toBe('a+b:x|y\\|z');
    expect(dedupKey([['a', 'b']], { a: 'x\\', b: 'y' }, {})).not.toBe(dedupKey([['a', 'b']], { a: 'x', b: '\\y' }, {}));
  });

  it('gives no key to an empty call, and the content hash to one with content but no key field', () => {
    expect(dedupKey(['call_id'], {}, { campaign: 'x' }, { empty: true })).toBeNull();
    expect(dedupKey(['call_id'], {}, { call_id: 'c-1' }, { empty: true })).toBe('call_id:c-1');
    expect(dedupKey(['call_id'], { a: 1 }, {})).toBe(`sha256:${contentHash({ a: 1 }, {})}`);
    expect(dedupKey(['call_id'], { a: 1 }, {}, { hash: 'given' })).toBe('sha256:given');
  });

  it('hashes the values that failed their checks too, so calls that differ only there are two calls', () => {
    const problem = (value: string) => ({
      field: 'phone_number',
      code: 'invalid_format' as const,
      message: 'm',
      value,
    });
    expect(contentHash({ a: 1 }, {}, [problem('98123')])).not.toBe(contentHash({ a: 1 }, {}, [problem('45')]));
    expect(contentHash({ a: 1 }, {}, [problem('98123')])).not.toBe(contentHash({ a: 1 }, {}));
    // Without such a value the hash is exactly that of {data, extra}, as docs/reference.md#deduplication writes it.
    const missing = { field: 'call_outcome', code: 'missing_required' as const, message: 'm' };
    expect(contentHash({ a: 1 }, {}, [missing])).toBe(
      createHash('sha256').update('{"data":{"a":1},"extra":{}}').digest('hex'),
    );
  });

  it('hashes any stored record, as intake hashed it, whatever the stored JSON holds', () => {
    const problems = [{ field: 'call_date', code: 'invalid_format' as const, message: 'm', value: '21/11/26' }];
    expect(recordContentHash({ id: 'x', data: { a: 1 }, extra: { b: 2 }, problems })).toBe(
      contentHash({ a: 1 }, { b: 2 }, problems),
    );
    for (const odd of [null, [1, 2], 'text', { data: null, extra: [1], problems: 'no' }])
      expect(recordContentHash(odd)).toBe(contentHash({}, {}));
  });

  it('passes over a value holding a NUL, which no store column can hold', () => {
    expect(dedupKey(['call_id', 'order_id'], {}, { call_id: 'a\u0000b', order_id: 'ORD-1' })).toBe('order_id:ORD-1');
    expect(dedupKey(['call_id'], {}, { call_id: '\u0000' })).toMatch(/^sha256:/);
  });
});

describe('canonicalJson, written fast', () => {
  // Keys that JSON.stringify would reorder or a copy could not hold, beside ordinary ones and surrogate pairs.
  const key = fc.oneof(
    fc.string(),
    fc.constantFrom('__proto__', '0', '7', '10', '01', '-1', '\u{1F600}', '\uFF5E', 'a', 'call_id'),
  );
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(key, tie('value'), { maxKeys: 6 }),
    ),
  })).value;

  it('writes every value as the hand-written canonical JSON does', () => {
    fc.assert(
      fc.property(json, (value) => canonicalJson(value) === canonicalJsonByHand(value)),
      { numRuns: 2000 },
    );
  });

  it('writes a value with index keys, an own __proto__ or holes by hand, as before', () => {
    expect(canonicalJson({ b: 1, 10: 'x', 9: 'y' })).toBe('{"10":"x","9":"y","b":1}');
    const parsed = JSON.parse('{"b":1,"__proto__":{"x":1}}');
    expect(canonicalJson(parsed)).toBe('{"__proto__":{"x":1},"b":1}');
    // biome-ignore lint/suspicious/noSparseArray: an array with a hole is the case under test.
    expect(canonicalJson({ a: [1, , 3] })).toBe(canonicalJsonByHand({ a: [1, , 3] }));
  });
});
