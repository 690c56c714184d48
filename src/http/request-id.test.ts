import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { RequestIdVariables } from 'hono/request-id';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestHeader, setReplyHeader } from './node-headers.js';
import { requestId } from './request-id.js';

/**
 * Under @hono/node-server, headers are read and set on Node's request and reply; under `app.request` through
 * Hono. Both must behave alike, so every case runs on both.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function testApp() {
  const app = new Hono<{ Variables: RequestIdVariables }>();
  app.use(requestId());
  app.post('/echo', (c) =>
    c.json({
      id: c.get('requestId'),
      type: requestHeader(c, 'content-type') ?? null,
      repeated: requestHeader(c, 'x-tag') ?? null,
    }),
  );
  app.get('/fail', (c) => {
    setReplyHeader(c, 'allow', 'POST');
    throw new Error('refused');
  });
  app.onError((_err, c) => c.json({ error: 405 }, 405));
  return app;
}

let url: string;
let close: () => void;
beforeAll(async () => {
  const app = testApp();
  await new Promise<void>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
      url = `http://127.0.0.1:${info.port}`;
      resolve();
    });
    close = () => server.close();
  });
});
afterAll(() => close());

const ways = {
  'over HTTP (@hono/node-server)': (path: string, init?: RequestInit) => fetch(`${url}${path}`, init),
  'through app.request': (path: string, init?: RequestInit) => testApp().request(path, init),
};

describe.each(Object.entries(ways))('request id and headers %s', (_way, send) => {
  it('gives each request a new UUID, sent back as X-Request-Id and seen by the route', async () => {
    const [a, b] = await Promise.all([send('/echo', { method: 'POST' }), send('/echo', { method: 'POST' })]);
    const [ida, idb] = [a.headers.get('x-request-id'), b.headers.get('x-request-id')];
    expect(ida).toMatch(UUID);
    expect(idb).toMatch(UUID);
    expect(ida).not.toBe(idb);
    expect((await a.json()).id).toBe(ida);
  });

  it("keeps a client's plain request id and replaces one that could break a log line", async () => {
    const kept = await send('/echo', { method: 'POST', headers: { 'x-request-id': 'trace-7f3a_b=' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-7f3a_b=');
    for (const given of ['has space', 'x'.repeat(256), 'semi;colon']) {
      const res = await send('/echo', { method: 'POST', headers: { 'x-request-id': given } });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('reads a header by its lower-case name, repeated values joined as the web Headers join them', async () => {
    const headers = new Headers({ 'Content-Type': 'application/x-www-form-urlencoded' });
    headers.append('X-Tag', 'a');
    headers.append('X-Tag', 'b');
    const res = await send('/echo', { method: 'POST', headers, body: 'a=1' });
    expect(await res.json()).toMatchObject({ type: 'application/x-www-form-urlencoded', repeated: 'a, b' });
  });

  it('carries a header set before an error onto the error reply, with the request id', async () => {
    const res = await send('/fail');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(res.headers.get('x-request-id')).toMatch(UUID);
  });
});
