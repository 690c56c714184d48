import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { historyOutageLog, storeOutageLog } from './store-outage.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let clock = 0;
  return { lines, log, tick: (ms: number) => (clock += ms), now: () => clock };
}

const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });

describe('the store outage log', () => {
  it('logs the first failure whole, then one line per interval with the counts, then the recovery', () => {
    const { lines, log, tick, now } = capture();
    const outage = storeOutageLog(log, { everyMs: 10_000, now });
    // 25 s at 40 calls a second, every tenth request a refused one whose receipt is lost too.
    for (let i = 0; i < 1000; i++) {
      outage.failed(full, { hook: 'end-of-call', receipt: i % 10 === 9 });
      tick(25);
    }
    outage.committed();
    outage.committed();

    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'cannot commit a call; calls are refused with 503 until the store commits again'],
      [50, 'the store still cannot commit'],
      [50, 'the store still cannot commit'],
      [40, 'the store commits again'],
    ]);
    expect(lines[0]).toMatchObject({
      hook: 'end-of-call',
      err: { message: 'database or disk is full', code: 'SQLITE_FULL', stack: expect.any(String) },
    });
    // Each count covers the requests since the line before it; the first line covers its own.
    expect(lines[1]).toMatchObject({
      error: 'database or disk is full',
      code: 'SQLITE_FULL',
      refusedCalls: 360,
      lostReceipts: 40,
      seconds: 10,
    });
    expect(lines[2]).toMatchObject({ refusedCalls: 360, lostReceipts: 40, seconds: 20 });
    expect(lines[3]).toMatchObject({ seconds: 25, refusedCalls: 900, lostReceipts: 100 });
  });

  it('starts over after a recovery, and says nothing while the store commits', () => {
    const { lines, log, tick, now } = capture();
    const outage = storeOutageLog(log, { now });
    outage.committed();
    outage.failed(full, { hook: 'a', receipt: true });
    tick(3000);
    outage.committed();
    outage.failed(full, { hook: 'b' });
    expect(lines.map((l) => l.msg)).toEqual([
      'cannot store a receipt',
      'the store commits again',
      'cannot commit a call; calls are refused with 503 until the store commits again',
    ]);
    expect(lines[1]).toMatchObject({ seconds: 3, refusedCalls: 0, lostReceipts: 1 });
    expect(lines[2]).toMatchObject({ hook: 'b' });
  });

  it('keeps the caller history reads apart: their own first line, interval lines and end', () => {
    const { lines, log, tick, now } = capture();
    const outage = historyOutageLog(log, { everyMs: 10_000, now });
    const down = Object.assign(new Error('connection terminated'), { code: 'ECONNRESET' });
    for (let i = 0; i < 300; i++) {
      outage.failed(down, 'caller-lookup');
      tick(50);
    }
    outage.read();
    outage.read();
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'cannot read the caller history; in-call hooks answer 503 until the store reads again'],
      [50, 'the store still cannot read the caller history'],
      [40, 'the store reads the caller history again'],
    ]);
    expect(lines[0]).toMatchObject({
      hook: 'caller-lookup',
      err: { message: 'connection terminated', code: 'ECONNRESET' },
    });
    expect(lines[1]).toMatchObject({
      error: 'connection terminated',
      code: 'ECONNRESET',
      refusedLookups: 200,
      seconds: 10,
    });
    expect(lines[2]).toMatchObject({ seconds: 15, refusedLookups: 300 });
  });
});
