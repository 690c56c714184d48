import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../record.js';
import { logSink } from './log.js';

const record: CallRecord = {
  id: '019a0000-0000-7000-8000-000000000001',
  hook: 'end-of-call',
  dedup_key: 'phone_number:+919876543210',
  received_at: '2026-11-25T10:00:00.000Z',
  source: 'webhook',
  revision: 2,
  data: {
    first_name: 'Asha',
    phone_number: '+919876543210',
    address: '12 MG Road',
    summary: 'Wants a refund',
    call_outcome: 'callback',
  },
  extra: { email: 'asha@example.com' },
  problems: [{ field: 'order_total', code: 'invalid_type', message: 'not a number', value: 'twelve' }],
};

async function linesFor(options: Record<string, unknown>): Promise<string[]> {
  const lines: string[] = [];
  const log = pino({ base: undefined }, { write: (line: string) => void lines.push(line) });
  const sink = await logSink.open(logSink.options.parse(options), { name: 'log', dataDir: '/nowhere', log });
  await sink.deliver(record, {
    attempt: 1,
    idempotencyKey: `${record.id}:log`,
    signal: new AbortController().signal,
    log,
  });
  return lines;
}

describe('log sink', () => {
  it('writes which call arrived and how it went, and nothing personal, by default (docs/reference.md#operating)', async () => {
    const [line] = await linesFor({});
    expect(JSON.parse(line!)).toMatchObject({
      sink: 'log',
      attempt: 1,
      msg: 'call delivered',
      call: {
        id: record.id,
        hook: 'end-of-call',
        source: 'webhook',
        revision: 2,
        call_outcome: 'callback',
        problems: ['invalid_type'],
      },
    });
    for (const personal of ['Asha', '9876543210', 'MG Road', 'refund', 'asha@example.com', 'twelve'])
      expect(line).not.toContain(personal);
  });

  it('writes the whole record with full: true', async () => {
    const [line] = await linesFor({ full: true });
    expect(JSON.parse(line!).record).toEqual(record);
  });

  it('refuses an option it does not know', () => {
    expect(logSink.options.safeParse({ fields: ['first_name'] }).success).toBe(false);
  });
});
