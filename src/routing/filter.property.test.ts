import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallRecord, Problem, Scalar } from '../record.js';
import { type Condition, compileFilter, describeFilter, type Filter, filterSchema } from './filter.js';

const RUNS = { numRuns: 2000 };

/** Names a config author could write by mistake or on purpose, and names that collide with Object.prototype. */
const hostileName = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'length',
  'prototype',
  'valid',
  'hook',
  'source',
  'dedup_key',
  'problems',
  'problem_fields',
  'a',
  'b',
  'a.b',
  'data.a',
  'extra.a',
  'extra.a.b',
  'data.__proto__',
  'extra.__proto__.a',
  'extra.constructor.name',
  'extra.a.0',
  '',
  '.',
  'data.',
  'extra.',
  ' a ',
  'A',
);
const pathOf = fc
  .array(fc.constantFrom('a', 'b', '__proto__', 'constructor', '0', 'length'), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join('.'));
const fieldName = fc.oneof(hostileName, pathOf, fc.string({ maxLength: 12 }));
const key = fc.oneof(hostileName, fc.string({ maxLength: 8 }));

const number = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
const text = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom('true', ' FALSE ', ' 184 ', '184.0', '', '  ', '2026-01-01', 'Order Placed'),
);
const scalar: fc.Arbitrary<Scalar> = fc.oneof(text, number, fc.boolean());
const ordered = fc.oneof(text, number);

const escaped = fc.string({ maxLength: 6 }).map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
/** A pattern start-up takes (filterSchema): valid JavaScript, not catastrophic, and one RE2 can run. */
const compiles = (source: string) => filterSchema.safeParse({ field: 'a', matches: source }).success;
const pattern = fc.oneof(
  fc.constantFrom('^a', '.*', '(order|call)\\s+placed$', '^\\d+$', 'true'),
  escaped,
  fc.string({ maxLength: 6 }).filter(compiles),
);

const condition: fc.Arbitrary<Condition> = fc.oneof(
  fc.record({ field: fieldName, eq: scalar }),
  fc.record({ field: fieldName, ne: scalar }),
  fc.record({ field: fieldName, in: fc.array(scalar, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field: fieldName, nin: fc.array(scalar, { minLength: 1, maxLength: 4 }) }),
  fc.record({ field: fieldName, exists: fc.boolean() }),
  fc.record({ field: fieldName, matches: pattern }),
  fc.record({ field: fieldName, gt: ordered }),
  fc.record({ field: fieldName, gte: ordered }),
  fc.record({ field: fieldName, lt: ordered }),
  fc.record({ field: fieldName, lte: ordered }),
);

const { filter } = fc.letrec<{ filter: Filter; all: Filter; any: Filter; not: Filter }>((tie) => ({
  filter: fc.oneof({ depthSize: 'small', withCrossShrink: true }, condition, tie('all'), tie('any'), tie('not')),
  all: fc.array(tie('filter'), { maxLength: 3 }).map((all) => ({ all })),
  any: fc.array(tie('filter'), { maxLength: 3 }).map((any) => ({ any })),
  not: tie('filter').map((not) => ({ not })),
}));

const problem: fc.Arbitrary<Problem> = fc.record({
  field: key,
  code: fc.constantFrom('missing_required', 'invalid_type', 'invalid_format'),
  message: fc.string({ maxLength: 8 }),
});

const record: fc.Arbitrary<CallRecord> = fc.record({
  id: fc.string(),
  hook: fc.oneof(fc.constantFrom('end-of-call', ' END-OF-CALL '), fc.string()),
  dedup_key: fc.string(),
  received_at: fc.constant('2026-03-04T10:00:00.000Z'),
  source: fc.constantFrom('webhook', 'reconcile', 'recovered', 'replay', 'simulate'),
  revision: fc.constant(1),
  data: fc.dictionary(key, scalar, { maxKeys: 6 }),
  extra: fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
  problems: fc.array(problem, { maxLength: 3 }),
});

const holds = (f: Filter, r: CallRecord) => compileFilter(f)(r);

describe('compileFilter, for any filter and record', () => {
  it('never throws and always answers a boolean', () => {
    fc.assert(
      fc.property(filter, record, (f, r) => {
        expect(typeof holds(f, r)).toBe('boolean');
        expect(typeof describeFilter(f)).toBe('string');
      }),
      RUNS,
    );
  });

  it('not inverts', () => {
    fc.assert(
      fc.property(filter, record, (f, r) => holds({ not: f }, r) === !holds(f, r)),
      RUNS,
    );
  });

  it('all and any of one filter equal that filter', () => {
    fc.assert(
      fc.property(
        filter,
        record,
        (f, r) => holds({ all: [f] }, r) === holds(f, r) && holds({ any: [f] }, r) === holds(f, r),
      ),
      RUNS,
    );
  });

  it('any [f, not f] is true and all [f, not f] is false', () => {
    fc.assert(
      fc.property(filter, record, (f, r) => holds({ any: [f, { not: f }] }, r) && !holds({ all: [f, { not: f }] }, r)),
      RUNS,
    );
  });

  it('ne, nin and exists false are the negations of eq, in and exists true, missing fields included', () => {
    fc.assert(
      fc.property(
        fieldName,
        scalar,
        fc.array(scalar, { minLength: 1, maxLength: 3 }),
        record,
        (field, value, values, r) => {
          expect(holds({ field, ne: value }, r)).toBe(!holds({ field, eq: value }, r));
          expect(holds({ field, nin: values }, r)).toBe(!holds({ field, in: values }, r));
          expect(holds({ field, exists: false }, r)).toBe(!holds({ field, exists: true }, r));
        },
      ),
      RUNS,
    );
  });

  it('in holds exactly when eq holds for one of the values', () => {
    fc.assert(
      fc.property(fieldName, fc.array(scalar, { minLength: 1, maxLength: 3 }), record, (field, values, r) => {
        expect(holds({ field, in: values }, r)).toBe(values.some((eq) => holds({ field, eq }, r)));
      }),
      RUNS,
    );
  });
});

/** Fields the schema keeps as they are: it trims names and refuses blank ones. */
const fieldsAreClean = (f: Filter): boolean => {
  if ('all' in f && f.all) return f.all.every(fieldsAreClean);
  if ('any' in f && f.any) return f.any.every(fieldsAreClean);
  if ('not' in f && f.not) return fieldsAreClean(f.not);
  const { field } = f as Condition;
  return field.trim() === field && field !== '';
};

describe('filterSchema', () => {
  it('accepts every filter of the grammar as it is', () => {
    fc.assert(
      fc.property(filter, (f) => {
        fc.pre(fieldsAreClean(f));
        expect(filterSchema.parse(f)).toEqual(f);
      }),
      RUNS,
    );
  });
});
