import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, startServer, type TestServer } from './helpers/server.js';

/**
 * Clients that are slow, oversized or not speaking HTTP, over raw sockets: each is cut off or refused with the
 * Error object, and limits hold while the body streams, not after it has all been read.
 */

let server: TestServer;
let port: number;
beforeAll(async () => {
  server = await startServer({ config: { headers_timeout: '500ms', request_timeout: '1s' } });
  port = server.port;
});
afterAll(() => server.close());

interface Exchange {
  socket: Socket;
  /** Resolves with everything the server sent once it closes the connection (or after `ms`). */
  reply: (ms?: number) => Promise<{ text: string; closedAfterMs: number }>;
}

function open(): Promise<Exchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => {
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('error', () => undefined);
      const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
      resolve({
        socket,
        reply: async (ms = 10_000) => {
          const closedAfterMs = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), ms))]);
          return { text, closedAfterMs };
        },
      });
    });
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
const head = (extra: string) =>
  `POST /webhooks/end-of-call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\n${extra}\r\n`;

describe('slow clients', () => {
  it('a body trickled byte by byte is cut off with 408 after the request timeout', async () => {
    const { socket, reply } = await open();
    socket.write(head('Content-Length: 1000\r\n'));
    const trickle = setInterval(() => socket.writable && socket.write('{'), 200);
    const { text, closedAfterMs } = await reply();
    clearInterval(trickle);
    expect(statusOf(text)).toBe(408);
    expect(bodyOf(text)).toEqual({ error: 408, message: expect.any(String) });
    expect(closedAfterMs).toBeGreaterThan(0);
    expect(closedAfterMs).toBeLessThan(5_000);
  });

  it('headers trickled line by line are cut off after the headers timeout', async () => {
    const { socket, reply } = await open();
    socket.write('POST /webhooks/end-of-call HTTP/1.1\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 150);
    const { text, closedAfterMs } = await reply();
    clearInterval(trickle);
    expect(statusOf(text)).toBe(408);
    expect(closedAfterMs).toBeGreaterThan(0);
    expect(closedAfterMs).toBeLessThan(5_000);
  });
});

describe('oversized and broken requests', () => {
  it('refuses a declared body over the limit at once, before any of it is sent', async () => {
    const { socket, reply } = await open();
    socket.write(head(`Content-Length: ${50 * 1024 * 1024}\r\n`));
    const { text, closedAfterMs } = await reply(3_000);
    expect(statusOf(text)).toBe(413);
    expect(bodyOf(text)).toEqual({ error: 413, message: expect.stringContaining('1048576') });
    expect(text.toLowerCase()).toContain('connection: close');
    expect(closedAfterMs).toBeGreaterThan(0);
  });

  it('refuses a chunked body while it streams, once it passes the limit', async () => {
    const { socket, reply } = await open();
    socket.write(head('Transfer-Encoding: chunked\r\n'));
    const chunk = 'x'.repeat(64 * 1024);
    let sent = 0;
    const pump = setInterval(() => {
      if (!socket.writable) return;
      socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
      sent += chunk.length;
    }, 5);
    const { text } = await reply();
    clearInterval(pump);
    expect(statusOf(text)).toBe(413);
    // Far less than the 50 MiB the client would have sent: the limit held while streaming.
    expect(sent).toBeLessThan(20 * 1024 * 1024);
  });

  it('after a 413, reads and drops what a client still sends for a bounded time, then closes', async () => {
    // A client that keeps sending after the server's end of stream (a half-open socket): the connection is still
    // closed, LINGER_MS (2 s) after the reply, and the reply was read first.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    let text = '';
    let ended = -1;
    socket.on('data', (d) => (text += d));
    socket.on('end', () => (ended = Date.now() - started));
    socket.on('error', () => undefined);
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
    socket.write(head('Transfer-Encoding: chunked\r\n'));
    const chunk = 'x'.repeat(16 * 1024);
    const pump = setInterval(() => socket.writable && socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`), 5);
    const closedAfterMs = await closed;
    clearInterval(pump);
    expect(statusOf(text)).toBe(413);
    expect(bodyOf(text)).toEqual({ error: 413, message: expect.stringContaining('1048576') });
    // The reply and our end of stream came first, while the client was still sending; the close came later.
    expect(ended).toBeGreaterThan(0);
    expect(closedAfterMs - ended).toBeGreaterThan(1_000);
    expect(closedAfterMs).toBeLessThan(10_000);
  });

  it('answers what is not HTTP with 400 and the Error object', async () => {
    const { socket, reply } = await open();
    socket.write('HELLO THERE\r\n\r\n');
    const { text } = await reply();
    expect(statusOf(text)).toBe(400);
    expect(bodyOf(text)).toEqual({ error: 400, message: expect.any(String) });
  });

  it('answers headers over the size limit with 431', async () => {
    const { socket, reply } = await open();
    socket.write(head(`X-Big: ${'a'.repeat(20 * 1024)}\r\nContent-Length: 2\r\n`));
    const { text } = await reply();
    expect(statusOf(text)).toBe(431);
    expect(bodyOf(text)).toEqual({ error: 431, message: expect.any(String) });
  });

  it('answers a body shorter than its Content-Length, once the client gives up, without a 500', async () => {
    const { socket, reply } = await open();
    socket.write(`${head('Content-Length: 100\r\n')}{"call_id":`);
    const { text } = await reply();
    expect([400, 408]).toContain(statusOf(text));
  });
});
