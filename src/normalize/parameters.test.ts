import { describe, expect, it } from 'vitest';
import {
  formatOf,
  impliedFormat,
  type Parameter,
  parameterSchema,
  parametersSchema,
  RECOMMENDED_PARAMETERS,
} from './parameters.js';

function messages(input: unknown): string[] {
  const result = parameterSchema.safeParse(input);
  return result.success ? [] : result.error.issues.map((issue) => issue.message);
}

describe('parameterSchema', () => {
  it('fills required and description with their defaults', () => {
    expect(parameterSchema.parse({ identifier: 'order_id', type: 'string' })).toEqual({
      identifier: 'order_id',
      type: 'string',
      required: false,
      description: '',
    });
  });

  it('accepts a full enum row', () => {
    const row = {
      identifier: 'call_outcome',
      type: 'string',
      required: true,
      description: 'Final outcome',
      format: 'enum',
      values: ['order placed', 'not interested'],
    };
    expect(parameterSchema.parse(row)).toEqual(row);
  });

  it.each(['FirstName', 'first-name', '1st_name', '_name', 'first name', ''])(
    'refuses the identifier %j',
    (identifier) => {
      expect(messages({ identifier, type: 'string' })).toEqual([
        'identifier must be lowercase snake_case (a letter, then letters, digits or underscores)',
      ]);
    },
  );

  it('refuses an unknown key', () => {
    const result = parameterSchema.safeParse({ identifier: 'a', type: 'string', value: '' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it('refuses an unknown type or format', () => {
    expect(parameterSchema.safeParse({ identifier: 'a', type: 'integer' }).success).toBe(false);
    expect(parameterSchema.safeParse({ identifier: 'a', type: 'string', format: 'uuid' }).success).toBe(false);
  });

  it('allows a format only on string parameters', () => {
    expect(messages({ identifier: 'call_duration', type: 'number', format: 'date' })).toEqual([
      'format is only allowed on string parameters (call_duration is a number)',
    ]);
  });

  it('needs values with format enum and only there', () => {
    expect(messages({ identifier: 'mood', type: 'string', format: 'enum' })).toEqual([
      'values is required when format is "enum"',
    ]);
    expect(messages({ identifier: 'mood', type: 'string', values: ['a'] })).toEqual([
      'values is only allowed when format is "enum"',
    ]);
    expect(messages({ identifier: 'mood', type: 'string', format: 'enum', values: [] })).toEqual([
      'values must list at least one value',
    ]);
  });

  it('refuses enum values that differ only by case', () => {
    expect(messages({ identifier: 'mood', type: 'string', format: 'enum', values: ['Good', 'good'] })).toEqual([
      'enum value "good" is listed twice (values are matched ignoring case)',
    ]);
  });
});

describe('parametersSchema', () => {
  it('names a duplicate identifier', () => {
    const result = parametersSchema.safeParse([
      { identifier: 'order_id', type: 'string' },
      { identifier: 'order_id', type: 'number' },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ path: [1, 'identifier'], message: 'duplicate parameter identifier "order_id"' }),
    ]);
  });

  it('accepts the recommended table as it is', () => {
    expect(parametersSchema.parse(RECOMMENDED_PARAMETERS)).toEqual(RECOMMENDED_PARAMETERS);
  });
});

describe('RECOMMENDED_PARAMETERS', () => {
  it('is spec 6.4 in order, with its required flags', () => {
    expect(RECOMMENDED_PARAMETERS.map((p) => [p.identifier, p.type, p.required])).toEqual([
      ['first_name', 'string', true],
      ['last_name', 'string', true],
      ['phone_number', 'string', true],
      ['email_address', 'string', false],
      ['order_id', 'string', false],
      ['call_date', 'string', true],
      ['call_duration', 'number', true],
      ['call_cost', 'number', false],
      ['product_name', 'string', false],
      ['quantity', 'number', false],
      ['order_value', 'number', false],
      ['address', 'string', false],
      ['pincode', 'string', false],
      ['sentiment_analysis', 'string', false],
      ['call_outcome', 'string', true],
      ['call_summary', 'string', true],
      ['recording_url', 'string', false],
    ]);
  });

  it('carries the formats of docs/reference.md#normalising', () => {
    const formats = Object.fromEntries(
      RECOMMENDED_PARAMETERS.filter((p) => p.format !== undefined).map((p) => [p.identifier, [p.format, p.values]]),
    );
    expect(formats).toEqual({
      phone_number: ['e164', undefined],
      email_address: ['email', undefined],
      call_date: ['date', undefined],
      sentiment_analysis: ['enum', ['Positive', 'Neutral', 'Negative']],
      recording_url: ['url', undefined],
    });
  });
});

describe('impliedFormat and formatOf', () => {
  const plain = (identifier: string, type: Parameter['type'] = 'string'): Parameter => ({
    identifier,
    type,
    required: false,
    description: '',
  });

  it('implies the documented formats for string parameters without one', () => {
    expect(impliedFormat(plain('phone_number'))).toEqual({ format: 'e164' });
    expect(impliedFormat(plain('call_date'))).toEqual({ format: 'date' });
    expect(impliedFormat(plain('email_address'))).toEqual({ format: 'email' });
    expect(impliedFormat(plain('recording_url'))).toEqual({ format: 'url' });
    expect(impliedFormat(plain('sentiment_analysis'))).toEqual({
      format: 'enum',
      values: ['Positive', 'Neutral', 'Negative'],
    });
  });

  it('implies nothing for other names, other types or an explicit format', () => {
    expect(impliedFormat(plain('first_name'))).toBeUndefined();
    expect(impliedFormat(plain('phone_number', 'number'))).toBeUndefined();
    expect(impliedFormat({ ...plain('phone_number'), format: 'email' })).toBeUndefined();
  });

  it('lets an explicit format win over the implied one', () => {
    expect(formatOf({ ...plain('sentiment_analysis'), format: 'enum', values: ['Happy', 'Sad'] })).toEqual({
      format: 'enum',
      values: ['Happy', 'Sad'],
    });
    expect(formatOf(plain('call_date'))).toEqual({ format: 'date' });
    expect(formatOf(plain('first_name'))).toBeUndefined();
  });
});
