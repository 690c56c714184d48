import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startServer, type TestServer } from './helpers/server.js';

/**
 * What only a raw socket can send: a Content-Length that lies (shorter or longer than the body), bodies cut off,
 * stray bytes after the body. The server answers each with a 2xx or a 4xx with the Error object, or closes the
 * connection; it never answers 500 and never goes down.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    config: { request_timeout: '1s', headers_timeout: '1s', auth_limit: { max: 100_000 } },
  });
});
afterAll(() => server.close());

function exchange(raw: Buffer, closeAfterMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
    socket.write(raw);
    setTimeout(() => socket.end(), closeAfterMs);
    setTimeout(() => socket.destroy(), 3_000);
  });
}

describe('requests whose framing lies', () => {
  it('never get a 500 and never bring the server down', { timeout: 120_000 }, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom('{"call_id":"w","first_name":"Asha"}', 'call_id=w&first_name=Asha', ''),
        fc.integer({ min: -50, max: 50 }),
        fc.constantFrom(
          'application/json',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=b',
          'text/plain',
        ),
        fc.constantFrom(0, 50, 400),
        async (noise, text, skew, type, closeAfterMs) => {
          const body = Buffer.concat([Buffer.from(text), Buffer.from(noise)]);
          const declared = Math.max(0, body.length + skew);
          const head = `POST /webhooks/end-of-call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: ${type}\r\nContent-Length: ${declared}\r\n\r\n`;
          const reply = await exchange(Buffer.concat([Buffer.from(head), body]), closeAfterMs);
          for (const match of reply.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/g)) {
            const status = Number(match[1]);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            expect(status).not.toBe(500);
            expect(status < 300 || (status >= 400 && status < 500), `status ${status}`).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${server.url}/readyz`)).json()).toMatchObject({ status: 'ready' });
    // The property saw both outcomes, or it proved little.
    expect([...statuses.keys()].some((s) => s === 200)).toBe(true);
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
  });
});
