import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../record.js';
import { addColumns, csvColumns, csvHeader, csvRow } from './calls-csv.js';
import { zonedIso } from './zoned-time.js';

const record = (over: Partial<CallRecord>): CallRecord => ({
  id: '01a1f866-0d00-7001-b3f8-a6b8420dce8a',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-20T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: {},
  extra: {},
  problems: [],
  ...over,
});

/**
 * The CSV of these records, header first, as lines of cells split the simple way (no cell here holds a comma unquoted).
 */
function csv(...records: CallRecord[]): string[] {
  const columns = csvColumns();
  for (const r of records) addColumns(columns, r);
  return [csvHeader(columns), ...records.map((r) => csvRow(r, columns, zonedIso('UTC')))];
}

describe('calls export --format csv (docs/reference.md#command-line)', () => {
  it('writes the time received in the given zone with its offset', () => {
    const r = record({ received_at: '2026-11-27T08:15:00.000Z' });
    const columns = csvColumns();
    expect(csvRow(r, columns, zonedIso('Asia/Kolkata'))).toBe(
      '01a1f866-0d00-7001-b3f8-a6b8420dce8a,end-of-call,call_id:c1,2026-11-27T13:45:00+05:30,webhook,\r\n',
    );
    expect(csv(r)[1]).toContain(',2026-11-27T08:15:00+00:00,');
  });

  it('has a column for every data and every extra field any call has, extra ones named extra.<field>', () => {
    const [header, first, second] = csv(
      record({ data: { first_name: 'Asha' }, extra: { campaign: 'diwali' } }),
      record({ data: { first_name: 'Ravi', amount: 499 }, extra: { agent: 'A7', campaign: 'holi' } }),
    );
    expect(header).toBe(
      'id,hook,dedup_key,received_at,source,first_name,amount,extra.campaign,extra.agent,problems\r\n',
    );
    expect(first).toMatch(/,webhook,Asha,,diwali,,\r\n$/);
    expect(second).toMatch(/,webhook,Ravi,499,holi,A7,\r\n$/);
  });

  it("never lets a field name take a fixed column or another field's column", () => {
    const [header, row] = csv(
      record({
        data: { source: 'referral', first_name: 'Asha' },
        extra: { first_name: 'A.', source: 'x', 'extra.source': 'y' },
      }),
    );
    expect(header).toBe(
      'id,hook,dedup_key,received_at,source,data.source,first_name,extra.first_name,extra.source,extra.extra.source,problems\r\n',
    );
    expect(row).toMatch(/,webhook,referral,Asha,A\.,x,y,\r\n$/);
  });

  it('neutralises each prefix a spreadsheet runs as a formula with a leading quote', () => {
    const values = {
      eq: '=HYPERLINK("http://x","y")',
      plus: '+919812345678',
      minus: '-2+3',
      at: '@SUM(A1)',
      tab: '\tx',
      cr: '\rx',
      plain: 'Asha',
    };
    const [, row] = csv(record({ extra: values }));
    const cells = row!
      .slice(0, -2)
      .split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)
      .slice(5, -1);
    expect(cells).toEqual([
      `"'=HYPERLINK(""http://x"",""y"")"`,
      "'+919812345678",
      "'-2+3",
      "'@SUM(A1)",
      "'\tx",
      `"'\rx"`,
      'Asha',
    ]);
  });

  it('neutralises the fixed columns and the header too', () => {
    const [header, row] = csv(record({ hook: '=evil', extra: { '=cmd': 1 } }));
    expect(header).toContain(',extra.=cmd,');
    expect(row).toContain(",'=evil,");
  });

  it('keeps numbers and truth values as they are, a negative number included', () => {
    const [, row] = csv(
      record({
        data: { amount: -250, call_duration: 184, paid: true, ratio: 0.5 },
        extra: { balance: -12.75, note: '-12.75' },
      }),
    );
    expect(row).toMatch(/,webhook,-250,184,true,0\.5,-12\.75,'-12\.75,\r\n$/);
  });

  it('writes an extra object or array as JSON text, quoted as CSV quotes, and null as empty', () => {
    const [, row] = csv(record({ extra: { tags: ['vip', 'repeat'], address: { city: 'Pune' }, none: null } }));
    expect(row).toMatch(/,webhook,"\[""vip"",""repeat""\]","\{""city"":""Pune""\}",,\r\n$/);
  });

  it('quotes a cell holding a comma, a quote or a line break, and lists the problems', () => {
    const [, row] = csv(
      record({
        data: { first_name: 'Ravi, Jr.', summary: 'said "call me"\nlater' },
        problems: [
          { field: 'email_address', code: 'invalid_format', message: 'not an email' },
          { field: 'call_outcome', code: 'missing_required', message: 'missing' },
        ],
      }),
    );
    expect(row).toMatch(
      /,webhook,"Ravi, Jr\.","said ""call me""\nlater",email_address:invalid_format call_outcome:missing_required\r\n$/,
    );
  });

  it('leaves the cell empty for a field a call does not have, also an inherited name', () => {
    const [header, , second] = csv(
      record({ extra: JSON.parse('{"constructor":"x","__proto__":"y"}') as Record<string, unknown> }),
      record({}),
    );
    expect(header).toContain(',extra.constructor,extra.__proto__,');
    expect(second).toMatch(/,webhook,,,\r\n$/);
  });
});
