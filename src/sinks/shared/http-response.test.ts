import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Received, type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import { PermanentError, RetryableError } from '../errors.js';
import { parseRetryAfter, sendRequest } from './http-response.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

/** A real receiver on 127.0.0.1 that counts requests and answers as `reply` scripts. */
async function receiver(
  reply: (req: Received, res: ServerResponse) => void,
): Promise<{ url: string; hits: () => number }> {
  const r = await startReceiver(reply);
  receivers.push(r);
  return { url: `${r.url}/hook`, hits: () => r.received.length };
}

const answer =
  (status: number, body = '', headers: Record<string, string> = {}) =>
  (_req: Received, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
  };
const post = (url: string, signal = new AbortController().signal, timeoutMs?: number) =>
  sendRequest(url, { method: 'POST', body: '{}' }, { signal, timeoutMs });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err,
  );

describe('sendRequest', () => {
  it('resolves with the response on 2xx', async () => {
    const { url } = await receiver(answer(201, 'created'));
    const response = await post(url);
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('created');
  });

  it.each([500, 502, 503, 408, 425, 429])(
    '%i is retryable, with the status and the body in the message',
    async (status) => {
      const { url } = await receiver(answer(status, 'try later'));
      const err = await failure(post(url));
      expect(err).toBeInstanceOf(RetryableError);
      expect(err).toMatchObject({ status, retryAfterMs: undefined, message: `HTTP ${status}: try later` });
    },
  );

  it('honours Retry-After in seconds and as an HTTP-date', async () => {
    const seconds = await receiver(answer(429, '', { 'retry-after': '120' }));
    expect(await failure(post(seconds.url))).toMatchObject({ status: 429, retryAfterMs: 120_000 });
    const date = await receiver(answer(503, '', { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }));
    const err = (await failure(post(date.url))) as RetryableError;
    expect(err.retryAfterMs).toBeGreaterThan(58_000);
    expect(err.retryAfterMs).toBeLessThanOrEqual(60_000);
    const garbage = await receiver(answer(503, '', { 'retry-after': 'soon' }));
    expect(await failure(post(garbage.url))).toMatchObject({ status: 503, retryAfterMs: undefined });
  });

  it.each([400, 401, 404, 410, 422])('%i is permanent', async (status) => {
    const { url } = await receiver(answer(status, '{"error":"bad field"}'));
    const err = await failure(post(url));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status, message: `HTTP ${status}: {"error":"bad field"}` });
  });

  it('does not follow a redirect: a 302 is permanent and the target is never asked', async () => {
    const target = await receiver(answer(200));
    const { url, hits } = await receiver(answer(302, '', { location: target.url }));
    const err = await failure(post(url));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status: 302, message: expect.stringContaining('redirects are not followed') });
    expect([hits(), target.hits()]).toEqual([1, 0]);
  });

  it('reads only the start of a huge error body', async () => {
    const { url } = await receiver((_req, res) => {
      res.on('error', () => undefined).writeHead(500);
      const chunk = 'x'.repeat(64 * 1024);
      // About 64 MiB, never fully sent: the client stops reading after 4 KiB.
      const write = (left: number): void => {
        if (left === 0 || res.destroyed) return void res.end();
        if (res.write(chunk)) write(left - 1);
        else res.once('drain', () => write(left - 1));
      };
      write(1024);
    });
    const err = (await failure(post(url))) as RetryableError;
    expect(err.status).toBe(500);
    expect(err.message).toBe(`HTTP 500: ${'x'.repeat(4 * 1024)}`);
  });

  it('turns a refused connection into a retryable network error', async () => {
    const { url } = await receiver(answer(200));
    await receivers.splice(0)[0]!.close();
    const err = await failure(post(url));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).toMatchObject({ status: undefined, message: expect.stringMatching(/^network error: .*ECONNREFUSED/) });
  });

  it('gives up on a receiver that never answers when its own time-out fires', async () => {
    const { url } = await receiver(() => undefined);
    const err = await failure(post(url, new AbortController().signal, 100));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).toMatchObject({ message: 'no answer within 100 ms' });
  });

  it("rejects with the worker's abort reason when its signal fires first", async () => {
    const { url } = await receiver(() => undefined);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => controller.abort(reason), 50);
    expect(await failure(post(url, controller.signal, 10_000))).toBe(reason);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');

  it.each([
    ['120', 120_000],
    [' 0 ', 0],
    ['Sat, 21 Nov 2026 10:00:30 GMT', 30_000],
    ['Saturday, 21-Nov-26 10:01:00 GMT', 60_000],
    ['Sat Nov 21 10:00:05 2026', 5_000],
    ['Fri, 20 Nov 2026 10:00:00 GMT', 0],
    ['99999999', 24 * 60 * 60 * 1000],
  ])('reads %j as %i ms', (value, ms) => {
    expect(parseRetryAfter(value, now)).toBe(ms);
  });

  it.each([
    null,
    undefined,
    '',
    'soon',
    '1.5',
    '-1',
    '12 seconds',
    'Sat, 21 Nov 2026 10:00:30',
    '2026-11-21T10:00:30Z',
  ])('ignores %j', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});
