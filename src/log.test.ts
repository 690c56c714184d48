import { describe, expect, it } from 'vitest';
import { createLogger, requestLogger } from './log.js';

const SECRET = 'key-0123456789abcdef';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level: 'info', secrets: [SECRET], destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  return { log, lines };
}

describe('logger', () => {
  it('redacts an Authorization header wherever an object carries it, and masks configured secrets', () => {
    const { log, lines } = capture();
    log.info({ authorization: 'Bearer a', request: { headers: { authorization: 'Bearer b' } }, url: `https://x/?key=${SECRET}` }, 'sent');
    expect(lines).toEqual([expect.objectContaining({ authorization: '[redacted]', request: { headers: { authorization: '[redacted]' } }, url: 'https://x/?key=***' })]);
  });

  it("writes the request line without redaction's cost but still masks configured secrets", () => {
    const { log, lines } = capture();
    requestLogger(log).info({ reqId: 'r1', method: 'POST', path: `/webhooks/${SECRET}`, status: 404 }, 'request');
    expect(lines).toEqual([expect.objectContaining({ level: 30, reqId: 'r1', path: '/webhooks/***', status: 404, msg: 'request' })]);
  });
});
