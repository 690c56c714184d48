import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, startServer, type TestServer } from './helpers/server.js';

/**
 * docs/reference.md#metrics: `/metrics` needs `Authorization: Bearer <token>` when `CALLHOOK_METRICS_TOKEN` (or
 * `metrics_token` in the config) is set, and answers anyone when neither is.
 */

const TOKEN = 'metrics-token-0123456789abcdef';
const servers: TestServer[] = [];
const started = async (options: Parameters<typeof startServer>[0]) => {
  const server = await startServer(options);
  servers.push(server);
  return server;
};
const scrape = (server: TestServer, authorization?: string) =>
  fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });

afterAll(async () => {
  for (const server of servers) await server.close();
});

describe('/metrics', () => {
  it('answers a scrape without credentials when no token is set', async () => {
    const server = await started({});
    const res = await scrape(server);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^callhook_outbox_depth \d+/m);
  });

  describe.each([
    ['CALLHOOK_METRICS_TOKEN', { env: { CALLHOOK_METRICS_TOKEN: TOKEN } }],
    ['metrics_token in the config', { config: { metrics_token: TOKEN } }],
  ])('with %s set', (_, options) => {
    it('refuses a scrape with no token, a wrong one or another credential with 401, the Error object and WWW-Authenticate: Bearer', async () => {
      const server = await started(options);
      for (const authorization of [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${ADMIN}`,
        `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
        TOKEN,
      ]) {
        const res = await scrape(server, authorization);
        expect(res.status, String(authorization)).toBe(401);
        expect(res.headers.get('www-authenticate'), String(authorization)).toBe('Bearer');
        expect(await res.json()).toEqual({ error: 401, message: expect.any(String) });
      }
    });

    it('answers a scrape bearing the token with the metrics', async () => {
      const server = await started(options);
      const res = await scrape(server, `Bearer ${TOKEN}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toMatch(/^callhook_outbox_depth \d+/m);
    });
  });
});
