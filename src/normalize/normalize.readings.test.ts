import { describe, expect, it } from 'vitest';
import { compileParameters, normalize } from './normalize.js';
import { RECOMMENDED_PARAMETERS } from './parameters.js';

/**
 * The amount and date readings of docs/reference.md#normalising (amount.ts, calendar-date.ts, each tested alone beside
 * it) as a hook sees them: what lands in data, and what a refusal reports.
 */

const recommended = compileParameters(RECOMMENDED_PARAMETERS);

const formBody = {
  first_name: 'Asha',
  last_name: 'Verma',
  phone_number: '98123 45678',
  call_date: '2026-11-21',
  call_duration: '184',
  call_outcome: 'order placed',
  call_summary: 'Ordered two mixer grinders.',
};

describe('normalize with the readings Indian callers use', () => {
  it('reads amounts and day-first dates as Indian callers say them (docs/reference.md#normalising)', () => {
    const { data, problems } = normalize(
      { ...formBody, call_date: '21.11.2026', call_cost: '₹499', quantity: '1,000', order_value: '2.3 lakh' },
      recommended,
    );
    expect(problems).toEqual([]);
    expect(data).toMatchObject({ call_date: '2026-11-21', call_cost: 499, quantity: 1000, order_value: 230000 });
    expect(
      normalize({ ...formBody, order_value: 'Rs. 5,00,000', call_date: '21 Nov 2026' }, recommended).data,
    ).toMatchObject({ order_value: 500000, call_date: '2026-11-21' });
  });

  it('reads numeric dates month first when the hook is compiled with dateOrder MDY', () => {
    const mdy = compileParameters(RECOMMENDED_PARAMETERS, { dateOrder: 'MDY' });
    expect(normalize({ call_date: '11/21/2026' }, mdy).data.call_date).toBe('2026-11-21');
    expect(normalize({ call_date: '05/03/2026' }, mdy).data.call_date).toBe('2026-05-03');
    expect(normalize({ call_date: '05/03/2026' }, recommended).data.call_date).toBe('2026-03-05');
    expect(normalize({ call_date: '21/11/2026' }, mdy).problems.find((q) => q.field === 'call_date')).toEqual({
      field: 'call_date',
      code: 'invalid_format',
      message:
        'call_date "21/11/2026" is not a valid date (expected YYYY-MM-DD, MM/DD/YYYY, MM-DD-YYYY, MM.DD.YYYY or 21 Nov 2026)',
      value: '21/11/2026',
    });
  });

  it('refuses a two-digit year and a comma in neither grouping, keeping each value as received', () => {
    const { data, problems } = normalize(
      { ...formBody, call_date: ' 21/11/26 ', call_cost: '12,99', order_value: '1,23,4567' },
      recommended,
    );
    expect(data).not.toHaveProperty('call_date');
    expect(data).not.toHaveProperty('call_cost');
    expect(data).not.toHaveProperty('order_value');
    expect(problems.map(({ field, code, value }) => [field, code, value])).toEqual([
      ['call_date', 'invalid_format', ' 21/11/26 '],
      ['call_cost', 'invalid_type', '12,99'],
      ['order_value', 'invalid_type', '1,23,4567'],
    ]);
  });

  it('refuses an unknown date order when the hook is compiled', () => {
    expect(() => compileParameters([], { dateOrder: 'YMD' as never })).toThrow(
      'dateOrder "YMD" is not one of DMY, MDY',
    );
  });
});
