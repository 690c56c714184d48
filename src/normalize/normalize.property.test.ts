import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMissing } from './coerce.js';
import { dedupKey } from './dedup-key.js';
import { type CompiledHook, compileParameters, normalize } from './normalize.js';
import { type Parameter, RECOMMENDED_PARAMETERS, SENTIMENTS } from './parameters.js';

const OTHER_PARAMETERS: Parameter[] = [
  { identifier: 'constructor', type: 'number', required: true, description: '' },
  { identifier: 'prototype', type: 'boolean', required: false, description: '' },
  { identifier: 'to_string', type: 'string', required: true, description: '' },
];

const hooks: [Parameter[], CompiledHook][] = [
  [RECOMMENDED_PARAMETERS, compileParameters(RECOMMENDED_PARAMETERS)],
  [RECOMMENDED_PARAMETERS, compileParameters(RECOMMENDED_PARAMETERS, { dateOrder: 'MDY' })],
  [OTHER_PARAMETERS, compileParameters(OTHER_PARAMETERS)],
];

const key = fc.oneof(
  fc.string(),
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'polluted', 'to_string'),
  fc.constantFrom(...RECOMMENDED_PARAMETERS.map((p) => p.identifier)),
);

// Values the sender plausibly sends, so the accepting paths are exercised and not only the refusals.
const plausible = fc.constantFrom(
  '',
  '  ',
  ' 42 ',
  '4.5e2',
  '1e999',
  'true',
  'NO',
  '98123 45678',
  '+44 20 7946 0958',
  '2024-02-29',
  '2026-11-21T23:30:00-05:00',
  '21/11/2026',
  '11-21-2026',
  '5.3.2026',
  '21 Nov 2026',
  '21/11/26',
  '31/02/2026',
  '5,00,000',
  '1,234,567.50',
  '₹499',
  'Rs. 1,299',
  '499 INR',
  '-₹1,200.50',
  '2.3 lakh',
  '1.5 Crore',
  '1,2,3',
  '12,34',
  'negative ',
  'asha@example.com',
  'https://example.com/r.mp3',
);

const value = fc.oneof(
  fc.jsonValue(),
  fc.string(),
  plausible,
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.dictionary(key, fc.jsonValue(), { maxKeys: 3 }),
);

const body = fc.dictionary(key, value, { maxKeys: 12 });

const SCALAR_TYPE = { string: 'string', number: 'number', boolean: 'boolean' } as const;

function expectWellFormed(parameters: Parameter[], hook: CompiledHook, fields: Record<string, unknown>): void {
  const { data, extra, problems } = normalize(fields, hook);
  const declared = new Map(parameters.map((p) => [p.identifier, p]));

  expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
  expect(Object.getPrototypeOf(extra)).toBe(Object.prototype);

  for (const [field, scalar] of Object.entries(data)) {
    const parameter = declared.get(field);
    expect(parameter).toBeDefined();
    expect(typeof scalar).toBe(SCALAR_TYPE[parameter?.type ?? 'string']);
    if (typeof scalar === 'number') expect(Number.isFinite(scalar)).toBe(true);
    if (field === 'phone_number') expect(scalar).toMatch(/^\+[1-9]\d{4,14}$/);
    if (field === 'call_date') expect(scalar).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    if (field === 'sentiment_analysis') expect(SENTIMENTS).toContain(scalar);
  }

  const problemFields = problems.map((p) => p.field);
  expect(new Set(problemFields).size).toBe(problemFields.length);
  const order = parameters.map((p) => p.identifier);
  expect(problemFields).toEqual(order.filter((id) => problemFields.includes(id)));

  for (const p of parameters) {
    const sent = Object.hasOwn(fields, p.identifier) ? fields[p.identifier] : undefined;
    const problem = problems.find((q) => q.field === p.identifier);
    if (isMissing(sent)) {
      expect(Object.hasOwn(data, p.identifier)).toBe(false);
      expect(problem?.code).toBe(p.required ? 'missing_required' : undefined);
      if (problem !== undefined) expect(Object.hasOwn(problem, 'value')).toBe(false);
    } else {
      // A present value either lands in data or is reported, never both, never neither.
      expect(Object.hasOwn(data, p.identifier)).toBe(problem === undefined);
      if (problem !== undefined) expect(problem.message).toContain(p.identifier);
      // docs/reference.md#normalising: a refused value travels in its problem exactly as received.
      if (problem !== undefined) expect(Object.is(problem.value, sent)).toBe(true);
    }
  }

  const undeclared = Object.keys(fields).filter((k) => !declared.has(k));
  expect(Object.keys(extra).sort()).toEqual(undeclared.sort());
  for (const k of undeclared) expect(Object.is(extra[k], fields[k])).toBe(true);

  const dedupFields = ['call_id', 'order_id', '__proto__', 'constructor'];
  const dedup = dedupKey(dedupFields, data, extra);
  expect(dedupKey(dedupFields, data, extra)).toBe(dedup);
  // Same content built in another order and through a JSON round trip gives the same key.
  const reordered = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(extra).reverse()))) as Record<
    string,
    unknown
  >;
  expect(dedupKey(dedupFields, { ...data }, reordered)).toBe(dedup);
}

describe('normalize over arbitrary bodies', () => {
  it('never throws, keeps data typed and declared, reports every required gap, pollutes nothing', () => {
    const prototypeKeys = Reflect.ownKeys(Object.prototype);
    fc.assert(
      fc.property(body, (fields) => {
        for (const [parameters, hook] of hooks) expectWellFormed(parameters, hook, fields);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Reflect.ownKeys(Object.prototype)).toEqual(prototypeKeys);
      }),
      { numRuns: 2000 },
    );
  });
});
