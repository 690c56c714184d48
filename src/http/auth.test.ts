import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { requireBearer } from './auth.js';

const KEYS = ['key-0123456789abcdef', 'rotated+key/with=='];

function app() {
  return new Hono().use(requireBearer(KEYS)).post('/', (c) => c.json({ ok: true }));
}

const send = (authorization?: string) =>
  app().request('/', { method: 'POST', headers: authorization === undefined ? {} : { authorization } });

describe('requireBearer', () => {
  it('accepts every key, the scheme in any case and more than one space before the token', async () => {
    for (const header of [
      'Bearer key-0123456789abcdef',
      'bEaReR rotated+key/with==',
      'Bearer   key-0123456789abcdef',
    ]) {
      expect((await send(header)).status, header).toBe(200);
    }
  });

  it('answers a missing, malformed or wrong key alike: 401, the Error object, WWW-Authenticate: Bearer', async () => {
    const refused = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Basic key-0123456789abcdef',
      'Bearerkey-0123456789abcdef',
      'Bearer key-0123456789abcdef x',
      'Bearer key-0123456789abcde',
      'Bearer key-0123456789abcdefg',
      'Bearer kéy',
    ];
    for (const header of refused) {
      const res = await send(header);
      expect(res.status, String(header)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(await res.json()).toEqual({ error: 401, message: expect.any(String) });
    }
  });

  it('refuses to be built without a key', () => {
    expect(() => requireBearer([])).toThrow(/at least one key/);
  });
});
