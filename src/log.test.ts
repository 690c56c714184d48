import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger, requestLogger, turnDestination } from './log.js';

const SECRET = 'key-0123456789abcdef';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    level: 'info',
    secrets: [SECRET],
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { log, lines };
}

describe('logger', () => {
  it('redacts an Authorization header wherever an object carries it, and masks configured secrets', () => {
    const { log, lines } = capture();
    log.info(
      {
        authorization: 'Bearer a',
        request: { headers: { authorization: 'Bearer b' } },
        url: `https://x/?key=${SECRET}`,
      },
      'sent',
    );
    expect(lines).toEqual([
      expect.objectContaining({
        authorization: '[redacted]',
        request: { headers: { authorization: '[redacted]' } },
        url: 'https://x/?key=***',
      }),
    ]);
  });

  it("writes the request line without redaction's cost but still masks configured secrets", () => {
    const { log, lines } = capture();
    requestLogger(log).info({ reqId: 'r1', method: 'POST', path: `/webhooks/${SECRET}`, status: 404 }, 'request');
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, reqId: 'r1', path: '/webhooks/***', status: 404, msg: 'request' }),
    ]);
  });
});

describe('logger, secrets JSON writes differently', () => {
  const lines = (secrets: string[], write: (log: ReturnType<typeof createLogger>) => void) => {
    const raw: string[] = [];
    write(createLogger({ level: 'info', secrets, destination: { write: (line: string) => void raw.push(line) } }));
    return raw;
  };

  it('masks a secret with a quote or a backslash in it, which a log line holds escaped', () => {
    const secret = 'k"ey\\0123456789abcdef';
    const [line] = lines([secret], (log) => log.warn({ url: `https://crm/?token=${secret}` }, `refused ${secret}`));
    expect(line).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(JSON.parse(line!)).toMatchObject({ url: 'https://crm/?token=***', msg: 'refused ***' });
  });

  it('keeps the line JSON when a secret is made of digits that a number on the line also holds', () => {
    const [line] = lines(['20261125'], (log) => log.info({ ms: 2026112512.5, path: '/webhooks/20261125' }, 'request'));
    expect(line!.endsWith('\n')).toBe(true);
    expect(JSON.parse(line!)).toMatchObject({ ms: 2026112512.5, path: '/webhooks/***' });
  });
});

describe('the log written once a turn', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'callhook-log-')), 'out.log');
  const read = (path: string) => readFileSync(path, 'utf8');

  it("writes a turn's lines together, in order, after the turn", async () => {
    const path = file();
    const log = createLogger({ level: 'info', destination: turnDestination(path) });
    log.info({ n: 1 }, 'first');
    log.warn({ n: 2 }, 'second');
    expect(read(path)).toBe('');
    await nextTurn();
    const lines = read(path)
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => [l.n, l.msg])).toEqual([
      [1, 'first'],
      [2, 'second'],
    ]);
    log.info({ n: 3 }, 'third');
    await nextTurn();
    expect(read(path).trimEnd().split('\n')).toHaveLength(3);
  });

  it('writes what waits when the logger is flushed', () => {
    const path = file();
    const log = createLogger({ level: 'info', destination: turnDestination(path) });
    log.info('stopping');
    log.flush();
    expect(JSON.parse(read(path))).toMatchObject({ msg: 'stopping' });
  });

  it('writes the lines still waiting when the process exits within the turn', () => {
    const path = file();
    const script = `import { createLogger, turnDestination } from ${JSON.stringify(new URL('./log.ts', import.meta.url).href)};
      const log = createLogger({ level: 'info', destination: turnDestination(${JSON.stringify(path)}) });
      log.error({ code: 3 }, 'cannot start');
      process.exit(3);`;
    expect(() => execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script])).toThrow();
    expect(JSON.parse(read(path))).toMatchObject({ code: 3, msg: 'cannot start' });
  });
});
