import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../record.js';
import { compileFilter, describeFilter, type Filter, filterSchema, MATCHED_LENGTH } from './filter.js';

const record = (over: Partial<CallRecord> = {}): CallRecord => ({
  id: 'rec_1',
  hook: 'end-of-call',
  dedup_key: 'call_id:c-42',
  received_at: '2026-03-04T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: {
    call_outcome: '  Order Placed ',
    duration: 184,
    amount: '184',
    paid: true,
    consent: 'TRUE',
    call_date: '2026-03-04',
    blank: '  ',
    hook: 'from-data',
  },
  extra: {
    call_outcome: 'shadowed by data',
    tags: ['VIP', ' new '],
    meta: { tier: 'Gold', 'a.b': 'dotted key' },
    'x.y': 'flat dotted',
    items: [{ sku: 'A1' }],
    nothing: null,
    none: [],
    count: '7',
  },
  problems: [],
  ...over,
});

const invalid = record({
  problems: [
    { field: 'phone', code: 'invalid_format', message: 'not a phone number' },
    { field: 'order_id', code: 'missing_required', message: 'required' },
  ],
});

const holds = (filter: Filter, on = record()) => compileFilter(filter)(on);

describe('compileFilter operators', () => {
  it.each<[string, Filter, boolean]>([
    ['eq ignores case and surrounding spaces', { field: 'call_outcome', eq: 'order placed' }, true],
    ['eq trims the filter value too', { field: 'call_outcome', eq: ' ORDER PLACED  ' }, true],
    ['eq on a different text', { field: 'call_outcome', eq: 'order cancelled' }, false],
    ['eq number with number', { field: 'duration', eq: 184 }, true],
    ['eq number field with numeric string', { field: 'duration', eq: ' 184 ' }, true],
    ['eq numeric string field with number', { field: 'amount', eq: 184.0 }, true],
    ['eq number with non-numeric string', { field: 'duration', eq: '184 s' }, false],
    ['eq two strings compare as text', { field: 'amount', eq: '184.0' }, false],
    ['eq boolean with boolean', { field: 'paid', eq: true }, true],
    ['eq boolean with "true" string', { field: 'paid', eq: 'True' }, true],
    ['eq "TRUE" string with boolean', { field: 'consent', eq: true }, true],
    ['eq boolean with number', { field: 'paid', eq: 1 }, false],
    ['eq on a missing field', { field: 'nope', eq: 'x' }, false],
    ['eq on a blank field', { field: 'blank', eq: '' }, false],
    ['eq any element of a list', { field: 'tags', eq: 'new' }, true],
    ['eq no element of a list', { field: 'tags', eq: 'old' }, false],
    ['eq on an object', { field: 'meta', eq: 'gold' }, false],
    ['ne on a different value', { field: 'call_outcome', ne: 'x' }, true],
    ['ne is the negation of eq', { field: 'call_outcome', ne: 'ORDER PLACED' }, false],
    ['ne on a missing field', { field: 'nope', ne: 'x' }, true],
    ['ne on a list holding the value', { field: 'tags', ne: 'vip' }, false],
    ['in with a matching member', { field: 'call_outcome', in: ['cancelled', 'order placed'] }, true],
    ['in with numbers and numeric strings', { field: 'amount', in: [1, 184] }, true],
    ['in without a match', { field: 'call_outcome', in: ['cancelled'] }, false],
    ['in on a missing field', { field: 'nope', in: ['x'] }, false],
    ['in any element of a list', { field: 'tags', in: ['new', 'x'] }, true],
    ['nin without a match', { field: 'call_outcome', nin: ['cancelled'] }, true],
    ['nin with a match', { field: 'call_outcome', nin: [' Order placed'] }, false],
    ['nin on a missing field', { field: 'nope', nin: ['x'] }, true],
    ['exists on a present field', { field: 'duration', exists: true }, true],
    ['exists on a missing field', { field: 'nope', exists: true }, false],
    ['exists on a blank string', { field: 'blank', exists: true }, false],
    ['exists on null', { field: 'nothing', exists: true }, false],
    ['exists on an empty list', { field: 'none', exists: true }, false],
    ['exists false on a missing field', { field: 'nope', exists: false }, true],
    ['exists false on a present field', { field: 'paid', exists: false }, false],
    ['matches ignores case', { field: 'call_outcome', matches: '^order\\s+PLACED$' }, true],
    ['matches the trimmed text', { field: 'call_outcome', matches: '^order' }, true],
    ['matches the text of a number', { field: 'duration', matches: '^1\\d\\d$' }, true],
    ['matches any element of a list', { field: 'tags', matches: '^vi' }, true],
    ['matches no text', { field: 'call_outcome', matches: 'refund' }, false],
    ['matches on a missing field', { field: 'nope', matches: '.*' }, false],
    ['gt numbers', { field: 'duration', gt: 60 }, true],
    ['gt equal numbers', { field: 'duration', gt: 184 }, false],
    ['gte equal numbers', { field: 'duration', gte: 184 }, true],
    ['lt numeric strings compare as numbers', { field: 'count', lt: '10' }, true],
    ['lte numbers', { field: 'duration', lte: 183 }, false],
    ['gte ISO dates compare as text', { field: 'call_date', gte: '2026-01-01' }, true],
    ['lt ISO dates', { field: 'call_date', lt: '2026-03-04' }, false],
    ['lte ISO dates', { field: 'call_date', lte: '2026-03-04' }, true],
    ['gt text ignores case', { field: 'call_outcome', gt: 'ORDER' }, true],
    ['gt on a missing field', { field: 'nope', gt: 0 }, false],
    ['lt on a missing field', { field: 'nope', lt: 0 }, false],
  ])('%s', (_name, filter, expected) => {
    expect(filterSchema.parse(filter)).toEqual(filter);
    expect(holds(filter)).toBe(expected);
  });
});

describe('compileFilter fields', () => {
  it.each<[string, Filter, boolean]>([
    ['a bare name looks in data first', { field: 'call_outcome', eq: 'order placed' }, true],
    ['then in extra', { field: 'tags', eq: 'vip' }, true],
    ['data. forces data', { field: 'data.hook', eq: 'from-data' }, true],
    ['extra. forces extra', { field: 'extra.call_outcome', eq: 'shadowed by data' }, true],
    ['data. does not fall back to extra', { field: 'data.tags', exists: true }, false],
    ['extra. walks into objects', { field: 'extra.meta.tier', eq: 'gold' }, true],
    ['a bare dotted name walks extra', { field: 'meta.tier', eq: 'GOLD' }, true],
    ['a key holding a dot', { field: 'x.y', eq: 'flat dotted' }, true],
    ['a dotted key is whole only at the top of extra', { field: 'extra.meta.a.b', eq: 'dotted key' }, false],
    ['list elements by index', { field: 'extra.items.0.sku', eq: 'a1' }, true],
    ['a list length is not a field', { field: 'extra.tags.length', exists: true }, false],
    ['a path through a text is missing', { field: 'extra.meta.tier.length', exists: true }, false],
    ['__proto__ is missing', { field: '__proto__', exists: true }, false],
    ['constructor is missing', { field: 'constructor', exists: true }, false],
    ['extra.constructor.name is missing', { field: 'extra.constructor.name', exists: true }, false],
    ['toString is missing', { field: 'data.toString', exists: true }, false],
  ])('%s', (_name, filter, expected) => {
    expect(holds(filter)).toBe(expected);
  });

  it('reads __proto__ and constructor only when the record owns them', () => {
    const hostile = record({
      data: JSON.parse('{"__proto__": "own", "constructor": "mine"}'),
      extra: JSON.parse('{"__proto__": {"x": 1}}'),
    });
    expect(holds({ field: '__proto__', eq: 'own' }, hostile)).toBe(true);
    expect(holds({ field: 'constructor', eq: 'MINE' }, hostile)).toBe(true);
    expect(holds({ field: 'extra.__proto__.x', eq: 1 }, hostile)).toBe(true);
  });

  it('has special fields that win over data', () => {
    expect(holds({ field: 'hook', eq: 'END-OF-CALL' })).toBe(true);
    expect(holds({ field: 'source', in: ['webhook', 'replay'] })).toBe(true);
    expect(holds({ field: 'dedup_key', matches: '^call_id:' })).toBe(true);
    expect(holds({ field: 'valid', eq: true })).toBe(true);
    expect(holds({ field: 'valid', eq: 'false' }, invalid)).toBe(true);
    expect(holds({ field: 'problems', eq: 0 })).toBe(true);
    expect(holds({ field: 'problems', gte: 2 }, invalid)).toBe(true);
    expect(holds({ field: 'problem_fields', exists: true })).toBe(false);
    expect(holds({ field: 'problem_fields', exists: true }, invalid)).toBe(true);
    expect(holds({ field: 'problem_fields', in: ['email', 'PHONE'] }, invalid)).toBe(true);
    expect(holds({ field: 'problem_fields', nin: ['phone'] }, invalid)).toBe(false);
    expect(holds({ field: 'problem_fields', nin: ['phone'] })).toBe(true);
  });
});

describe('matches on long values', () => {
  const long = (at: number, word: string) =>
    record({ data: { call_summary: `${'x'.repeat(at)}${word}${'y'.repeat(10_000 - at - word.length)}` } });

  it('matches a value of 10,000 characters on its first 4,096 only (docs/reference.md#operating)', () => {
    const filter = filterSchema.parse({ field: 'call_summary', matches: 'refund' });
    expect(holds(filter, long(100, 'refund'))).toBe(true);
    expect(holds(filter, long(MATCHED_LENGTH - 6, 'refund'))).toBe(true);
    expect(holds(filter, long(MATCHED_LENGTH - 5, 'refund'))).toBe(false);
    expect(holds(filter, long(5_000, 'refund'))).toBe(false);
  });

  // Issue 20: patterns safe-regex2 lets through, exponential ((a|a)*$, (a|aa)*$) or polynomial (a*a*a*a*a*a*$) when
  // backtracked. On a value of as many a's as are matched and one '!', a backtracking engine would not finish (the
  // test's timeout is the guard); the linear-time engine gives the answer. Unanchored, each matches empty at the end.
  const hostile = record({ data: { call_summary: `${'a'.repeat(MATCHED_LENGTH - 1)}!` } });
  it.each([
    ['(a|a)*$', true],
    ['(a|aa)*$', true],
    ['a*a*a*a*a*a*$', true],
    ['^(a|a)*$', false],
    ['^(a|aa)*$', false],
    ['^a*a*a*a*a*a*$', false],
  ])('runs %s on a hostile 4,096-character value to its answer, %s', (source, expected) => {
    expect(holds(filterSchema.parse({ field: 'call_summary', matches: source }), hostile)).toBe(expected);
  });
});

describe('compileFilter combinators', () => {
  const yes: Filter = { field: 'paid', eq: true };
  const no: Filter = { field: 'paid', eq: false };

  it.each<[string, Filter, boolean]>([
    ['all [] is true', { all: [] }, true],
    ['any [] is false', { any: [] }, false],
    ['all of true parts', { all: [yes, yes] }, true],
    ['all with a false part', { all: [yes, no] }, false],
    ['any with a true part', { any: [no, yes] }, true],
    ['any of false parts', { any: [no, no] }, false],
    ['not inverts', { not: no }, true],
    ['not not', { not: { not: yes } }, true],
    ['nested', { all: [{ any: [no, { not: no }] }, { not: { all: [yes, no] } }] }, true],
  ])('%s', (_name, filter, expected) => {
    expect(holds(filter)).toBe(expected);
  });

  it('builds each regular expression once, not per record', () => {
    const spy = { count: 0 };
    const Original = RegExp;
    const predicate = compileFilter({ any: [{ field: 'call_outcome', matches: 'order' }] });
    globalThis.RegExp = new Proxy(Original, {
      construct: (target, args) => (spy.count++, new target(...(args as [string]))),
    });
    try {
      for (let i = 0; i < 5; i++) expect(predicate(record())).toBe(true);
    } finally {
      globalThis.RegExp = Original;
    }
    expect(spy.count).toBe(0);
  });
});

describe('filterSchema', () => {
  const message = (value: unknown) => {
    const result = filterSchema.safeParse(value);
    expect(result.success).toBe(false);
    return result.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('\n');
  };

  it('accepts the grammar and trims field names', () => {
    const filter = {
      all: [{ field: ' call_outcome ', eq: 'order placed' }, { any: [{ not: { field: 'valid', eq: false } }] }],
    };
    expect(filterSchema.parse(filter)).toEqual({
      all: [{ field: 'call_outcome', eq: 'order placed' }, { any: [{ not: { field: 'valid', eq: false } }] }],
    });
  });

  it.each<[string, unknown, string]>([
    [
      'two operators',
      { field: 'a', eq: 1, ne: 2 },
      ': a condition takes exactly one operator (eq, ne, in, nin, exists, matches, gt, gte, lt, lte), got eq and ne',
    ],
    ['no operator', { field: 'a' }, 'got none'],
    ['an unknown operator', { field: 'a', like: 'x' }, 'like: unknown operator "like"; the operators are eq, ne,'],
    ['an unknown key', { every: [] }, 'every: unknown key "every"'],
    ['an operator without a field', { eq: 1 }, 'got eq without a field'],
    ['an empty object', {}, 'got an empty object'],
    [
      'a combinator with a condition',
      { all: [], field: 'a', eq: 1 },
      'exactly one of all, any, not, or a condition; got all, field and eq',
    ],
    [
      'a bad regular expression',
      { field: 'a', matches: '(unclosed' },
      'matches: "(unclosed" is not a valid regular expression',
    ],
    [
      'a pattern that backtracks catastrophically',
      { field: 'a', matches: '(a+)+$' },
      'matches: "(a+)+$" can backtrack catastrophically',
    ],
    [
      'a backreference, which RE2 cannot run',
      { field: 'a', matches: '(a)\\1' },
      'matches: "(a)\\\\1" cannot be run in linear time (backreferences and lookarounds are not supported: invalid escape sequence: `\\1`)',
    ],
    [
      'a lookahead',
      { field: 'a', matches: 'order(?! cancelled)' },
      'matches: "order(?! cancelled)" cannot be run in linear time',
    ],
    [
      'a lookbehind',
      { field: 'a', matches: '(?<=no )refund' },
      'matches: "(?<=no )refund" cannot be run in linear time',
    ],
    [
      'a nested one deeper in the tree',
      { any: [{ not: { field: 'a', matches: '^([a-z]+\\s?)*$' } }] },
      'any.0.not.matches: "^([a-z]+\\\\s?)*$" can backtrack catastrophically',
    ],
    ['an empty in-list', { field: 'a', in: [] }, 'in: in takes a non-empty list'],
    ['an empty nin-list', { field: 'a', nin: [] }, 'nin: nin takes a non-empty list'],
    ['an object for eq', { field: 'a', eq: { x: 1 } }, 'eq: eq takes a string, number or boolean'],
    ['a boolean for gt', { field: 'a', gt: true }, 'gt: gt takes a number or a string'],
    ['a string for exists', { field: 'a', exists: 'yes' }, 'exists: exists takes true or false'],
    ['an empty field', { field: '  ', eq: 1 }, 'field: field must not be empty'],
    ['a non-object', 'valid', ': a filter must be an object'],
    ['null', null, ': a filter must be an object'],
    ['all not a list', { all: { field: 'a', eq: 1 } }, 'all: all takes a list of filters'],
    [
      'a nested mistake, with its path',
      { any: [{ not: { field: 'a', eq: 1, gt: 2 } }] },
      'any.0.not: a condition takes exactly one operator',
    ],
  ])('refuses %s', (_name, value, expected) => {
    expect(message(value)).toContain(expected);
  });

  it('drops a __proto__ key instead of letting it reach the prototype', () => {
    const parsed = filterSchema.parse(JSON.parse('{"field": "paid", "eq": false, "__proto__": {"all": []}}'));
    expect('all' in parsed).toBe(false);
    expect(compileFilter(parsed)(record())).toBe(false);
  });
});

describe('describeFilter', () => {
  it.each<[Filter, string]>([
    [
      {
        all: [
          { field: 'call_outcome', eq: 'order placed' },
          { field: 'valid', eq: true },
        ],
      },
      'call_outcome eq "order placed" and valid eq true',
    ],
    [
      {
        any: [
          { field: 'a', in: [1, 'b'] },
          {
            all: [
              { field: 'b', exists: true },
              { field: 'c', exists: false },
            ],
          },
        ],
      },
      'a in [1, "b"] or (b exists and c is missing)',
    ],
    [{ not: { field: 'summary', matches: 'refund' } }, 'not (summary matches /refund/i)'],
    [{ all: [] }, 'always'],
    [{ any: [] }, 'never'],
    [{ field: 'odd name\n', gte: '2026-01-01' }, '"odd name\\n" gte "2026-01-01"'],
  ])('%j reads %s', (filter, expected) => {
    expect(describeFilter(filter)).toBe(expected);
  });
});
