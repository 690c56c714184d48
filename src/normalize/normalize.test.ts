import { describe, expect, it } from 'vitest';
import { compileParameters, normalize } from './normalize.js';
import { type Parameter, RECOMMENDED_PARAMETERS } from './parameters.js';

const recommended = compileParameters(RECOMMENDED_PARAMETERS);

/** A form-encoded end-of-call body as the sender sends it: all text, "" where the AI found nothing. */
const formBody = {
  first_name: ' Asha ',
  last_name: 'Verma',
  phone_number: '98123 45678',
  email_address: '',
  order_id: 'ORD-1',
  call_date: '2026-11-21',
  call_duration: '184',
  call_cost: '2.75',
  product_name: 'Mixer grinder',
  quantity: '2',
  order_value: '4999.00',
  address: '12 MG Road, Bengaluru',
  pincode: '560001',
  sentiment_analysis: 'positive',
  call_outcome: 'order placed',
  call_summary: 'Ordered two mixer grinders.',
  recording_url: '',
  campaign: 'diwali',
};

describe('normalize with the recommended table', () => {
  it('normalises a typical form-style payload', () => {
    expect(normalize(formBody, recommended)).toEqual({
      data: {
        first_name: 'Asha',
        last_name: 'Verma',
        phone_number: '+919812345678',
        order_id: 'ORD-1',
        call_date: '2026-11-21',
        call_duration: 184,
        call_cost: 2.75,
        product_name: 'Mixer grinder',
        quantity: 2,
        order_value: 4999,
        address: '12 MG Road, Bengaluru',
        pincode: '560001',
        sentiment_analysis: 'Positive',
        call_outcome: 'order placed',
        call_summary: 'Ordered two mixer grinders.',
      },
      extra: { campaign: 'diwali' },
      problems: [],
    });
  });

  it('reports each bad field once, in declaration order, with the value as received, and leaves it out of data', () => {
    const result = normalize(
      {
        ...formBody,
        first_name: '',
        phone_number: '12345',
        email_address: ' asha@ ',
        call_date: '21/11/26',
        call_duration: 'three minutes',
        quantity: ['2'],
        sentiment_analysis: 'happy',
        call_outcome: null,
        recording_url: 'recordings/1.mp3',
      },
      recommended,
    );
    // toStrictEqual: a missing_required problem has no value key at all, not one that is undefined.
    expect(result.problems).toStrictEqual([
      { field: 'first_name', code: 'missing_required', message: 'first_name is required but was missing or empty' },
      {
        field: 'phone_number',
        code: 'invalid_format',
        message: 'phone_number "12345" is not a valid phone number (expected E.164, default region IN)',
        value: '12345',
      },
      {
        field: 'email_address',
        code: 'invalid_format',
        message: 'email_address " asha@ " is not a valid e-mail address',
        value: ' asha@ ',
      },
      {
        field: 'call_date',
        code: 'invalid_format',
        message:
          'call_date "21/11/26" is not a valid date (expected YYYY-MM-DD, DD/MM/YYYY, DD-MM-YYYY, DD.MM.YYYY or 21 Nov 2026)',
        value: '21/11/26',
      },
      {
        field: 'call_duration',
        code: 'invalid_type',
        message:
          'call_duration "three minutes" is not a number (expected a number such as 1299.50, 1,299, 5,00,000, ₹499 or 2 lakh)',
        value: 'three minutes',
      },
      { field: 'quantity', code: 'invalid_type', message: 'quantity is an array, expected a number', value: ['2'] },
      {
        field: 'sentiment_analysis',
        code: 'invalid_format',
        message: 'sentiment_analysis "happy" is not one of Positive, Neutral, Negative',
        value: 'happy',
      },
      { field: 'call_outcome', code: 'missing_required', message: 'call_outcome is required but was missing or empty' },
      {
        field: 'recording_url',
        code: 'invalid_format',
        message: 'recording_url "recordings/1.mp3" is not a valid URL (expected an absolute http or https URL)',
        value: 'recordings/1.mp3',
      },
    ]);
    expect(Object.keys(result.data)).toEqual([
      'last_name',
      'order_id',
      'call_cost',
      'product_name',
      'order_value',
      'address',
      'pincode',
      'call_summary',
    ]);
  });

  it('takes JSON numbers, international phones, date-times and any-case sentiments', () => {
    const { data, problems } = normalize(
      {
        ...formBody,
        phone_number: '+44 20 7946 0958',
        call_date: '2026-11-21T23:30:00-05:00',
        call_duration: 184,
        pincode: 560001,
        sentiment_analysis: 'NEGATIVE',
        recording_url: 'https://cdn.example.com/r/1.mp3',
      },
      recommended,
    );
    expect(problems).toEqual([]);
    expect(data).toMatchObject({
      phone_number: '+442079460958',
      call_date: '2026-11-21',
      call_duration: 184,
      pincode: '560001',
      sentiment_analysis: 'Negative',
      recording_url: 'https://cdn.example.com/r/1.mp3',
    });
  });

  it('reports every required field of an empty body', () => {
    const { data, extra, problems } = normalize({}, recommended);
    expect(data).toEqual({});
    expect(extra).toEqual({});
    expect(problems.map((p) => [p.field, p.code])).toEqual(
      RECOMMENDED_PARAMETERS.filter((p) => p.required).map((p) => [p.identifier, 'missing_required']),
    );
  });

  it('uses the configured region for local phone numbers', () => {
    const us = compileParameters(RECOMMENDED_PARAMETERS, { region: 'US' });
    expect(normalize({ phone_number: '(415) 555-2671' }, us).data.phone_number).toBe('+14155552671');
    expect(normalize({ phone_number: '12345' }, us).problems.find((q) => q.field === 'phone_number')?.message).toBe(
      'phone_number "12345" is not a valid phone number (expected E.164, default region US)',
    );
  });
});

describe('normalize with other declarations', () => {
  const hook = compileParameters([
    { identifier: 'opted_in', type: 'boolean', required: true, description: '' },
    { identifier: 'constructor', type: 'number', required: false, description: '' },
    { identifier: 'prototype', type: 'string', required: false, description: '' },
    { identifier: 'phone_number', type: 'number', required: false, description: '' },
    {
      identifier: 'tier',
      type: 'string',
      required: false,
      description: '',
      format: 'enum',
      values: ['Gold', 'Silver'],
    },
  ]);

  it('coerces booleans and reports what it expected', () => {
    expect(normalize({ opted_in: 'YES' }, hook).data).toEqual({ opted_in: true });
    expect(normalize({ opted_in: 0 }, hook).data).toEqual({ opted_in: false });
    expect(normalize({ opted_in: 'maybe' }, hook).problems).toEqual([
      {
        field: 'opted_in',
        code: 'invalid_type',
        message: 'opted_in "maybe" is not a boolean (expected true/false, yes/no or 1/0)',
        value: 'maybe',
      },
    ]);
  });

  it('treats constructor and prototype as ordinary declared fields', () => {
    expect(normalize({ opted_in: true }, hook).data).toEqual({ opted_in: true });
    const result = normalize({ opted_in: true, constructor: '7', prototype: ' x ' }, hook);
    expect(result.data).toEqual({ opted_in: true, constructor: 7, prototype: 'x' });
    expect(Object.getPrototypeOf(result.data)).toBe(Object.prototype);
  });

  it('applies no implied format to a non-string parameter', () => {
    expect(normalize({ opted_in: true, phone_number: '9812345678' }, hook).data).toEqual({
      opted_in: true,
      phone_number: 9812345678,
    });
  });

  it('applies an explicit enum and reports objects as the wrong type', () => {
    expect(normalize({ opted_in: true, tier: 'gold' }, hook).data).toEqual({ opted_in: true, tier: 'Gold' });
    expect(normalize({ opted_in: true, tier: { a: 1 } }, hook).problems).toEqual([
      { field: 'tier', code: 'invalid_type', message: 'tier is an object, expected a string', value: { a: 1 } },
    ]);
  });

  it('keeps __proto__ and other undeclared keys in extra as data, unchanged', () => {
    const fields = JSON.parse('{"opted_in":"true","__proto__":{"polluted":1},"nested":{"a":[1,""]},"empty":""}');
    const result = normalize(fields, hook);
    expect(Object.hasOwn(result.extra, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(result.extra)).toBe(Object.prototype);
    expect(JSON.stringify(result.extra)).toBe('{"__proto__":{"polluted":1},"nested":{"a":[1,""]},"empty":""}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads a null-prototype object, as a form parser may build', () => {
    const fields = Object.assign(Object.create(null) as Record<string, unknown>, { opted_in: '1', other: 'x' });
    expect(normalize(fields, hook)).toEqual({ data: { opted_in: true }, extra: { other: 'x' }, problems: [] });
  });

  it('shortens a long value in a message, and keeps it whole in the problem', () => {
    const [problem] = normalize({ opted_in: 'x'.repeat(500) }, hook).problems;
    expect(problem?.message).toBe(
      `opted_in "${'x'.repeat(79)}…" is not a boolean (expected true/false, yes/no or 1/0)`,
    );
    expect(problem?.value).toBe('x'.repeat(500));
  });
});

describe('compileParameters', () => {
  it('refuses invalid declarations with a message naming the problem', () => {
    const duplicate: Parameter[] = [
      { identifier: 'a', type: 'string', required: false, description: '' },
      { identifier: 'a', type: 'string', required: false, description: '' },
    ];
    expect(() => compileParameters(duplicate)).toThrow(/duplicate parameter identifier "a"/);
    const badFormat = [
      { identifier: 'n', type: 'number', required: false, description: '', format: 'date' },
    ] as Parameter[];
    expect(() => compileParameters(badFormat)).toThrow(/format is only allowed on string parameters/);
  });

  it('refuses an unknown region', () => {
    expect(() => compileParameters([], { region: 'XX' as never })).toThrow('region "XX" is not a known country code');
  });

  it('returns a frozen hook that keeps its declarations', () => {
    expect(Object.isFrozen(recommended)).toBe(true);
    expect(recommended.region).toBe('IN');
    expect(recommended.dateOrder).toBe('DMY');
    expect(recommended.parameters).toEqual(RECOMMENDED_PARAMETERS);
  });
});
