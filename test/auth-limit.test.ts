import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, post, sampleCall, startServer, type TestServer } from './helpers/server.js';

/** Repeated failed authentication from one address is shed with 429; authenticated traffic never is. */

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ config: { auth_limit: { max: 3, window: '1m' } } });
});
afterAll(() => server.close());

describe('failed authentication', () => {
  it('turns into 429 with Retry-After after the limit, while a valid key still gets in', async () => {
    const wrong = () => post(server.url, sampleCall(), { key: 'wrong-key-0123456789abcdef' });
    for (let i = 0; i < 3; i++) expect((await wrong()).status).toBe(401);
    const limited = await wrong();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await limited.json()).toEqual({ error: 429, message: expect.stringContaining('Too many failed') });
    const noKey = await fetch(`${server.url}/webhooks/end-of-call`, { method: 'POST', body: '{}' });
    expect(noKey.status).toBe(429);
    // The admin routes share the limit.
    expect(
      (await fetch(`${server.url}/admin/calls`, { headers: { authorization: 'Bearer nope-0123456789abcdef' } })).status,
    ).toBe(429);

    const ok = await post(server.url, sampleCall());
    expect(ok.status).toBe(200);
    expect((await fetch(`${server.url}/admin/calls`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(
      200,
    );
  });
});
