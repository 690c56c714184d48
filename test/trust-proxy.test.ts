import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, post, sampleCall, spawnServer, startServer, type TestServer, tempDir, until } from './helpers/server.js';

/**
 * docs/reference.md#exposure, `trust_proxy`: when true, the auth limiter and the request log take the client's address
 * from the last X-Forwarded-For hop, the one the proxy added; when false (the default), from the peer.
 */

const WRONG = 'wrong-key-0123456789abcdef';
const authLimit = { max: 3, window: '1m' };

/** A webhook as a reverse proxy passes it on: X-Forwarded-For lines as given, each its own header line. */
function viaProxy(url: string, forwarded: string | string[], key = WRONG): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(sampleCall());
    const req = request(`${url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-forwarded-for': forwarded,
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('without trust_proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { auth_limit: authLimit } });
  });
  afterAll(() => server?.close());

  it('counts every wrong key against the peer, whatever X-Forwarded-For says', async () => {
    const statuses = [];
    for (const client of ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'])
      statuses.push(await viaProxy(server.url, client));
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect(await viaProxy(server.url, '203.0.113.50')).toBe(429);
    expect(await viaProxy(server.url, '203.0.113.50', KEY)).toBe(200);
  });
});

describe('with trust_proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: { trust_proxy: true, auth_limit: authLimit } });
  });
  afterAll(() => server?.close());

  it('counts wrong keys against the last hop, so one misconfigured client does not lock out another', async () => {
    const misconfigured = '203.0.113.7';
    // What the client wrote before the proxy's hop changes nothing: only the last hop is the client.
    const statuses = [];
    for (const forwarded of [misconfigured, `10.9.9.9, ${misconfigured}`, ['192.0.2.1', misconfigured]])
      statuses.push(await viaProxy(server.url, forwarded));
    expect(statuses).toEqual([401, 401, 401]);
    expect(await viaProxy(server.url, misconfigured)).toBe(429);
    expect(await viaProxy(server.url, [`${misconfigured}, 192.0.2.1`, misconfigured])).toBe(429);

    // Another client behind the same proxy, with a wrong key of its own, is told so, not shed.
    expect(await viaProxy(server.url, '198.51.100.9')).toBe(401);
    // A valid key always passes, from the limited client too.
    expect(await viaProxy(server.url, misconfigured, KEY)).toBe(200);
    expect((await post(server.url, sampleCall())).status).toBe(200);
  });

  it('counts a request whose last hop is no address against the peer', async () => {
    const statuses = [];
    for (const forwarded of ['garbage', '', '203.0.113.8, ', 'proxy.internal'])
      statuses.push(await viaProxy(server.url, forwarded));
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe('the request log', () => {
  it('carries the client address: the last hop when trust_proxy is true, the peer when the hop is no address', async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    writeFileSync(config, JSON.stringify({ trust_proxy: true }));
    const server = await spawnServer(dataDir, { CALLHOOK_CONFIG: config, LOG_LEVEL: 'info' });
    try {
      expect(await viaProxy(server.url, '198.51.100.23', KEY)).toBe(200);
      expect(await viaProxy(server.url, 'garbage', KEY)).toBe(200);
      const requestLines = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.includes('"msg":"request"') && line.includes('/webhooks/'));
      await until(() => requestLines().length >= 2);
      expect(requestLines().map((line) => (JSON.parse(line) as { remote?: string }).remote)).toEqual([
        '198.51.100.23',
        '127.0.0.1',
      ]);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('carries the peer without trust_proxy, whatever X-Forwarded-For says', async () => {
    const server = await spawnServer(tempDir(), { LOG_LEVEL: 'info', CALLHOOK_API_KEYS: KEY });
    try {
      expect(await viaProxy(server.url, ['203.0.113.9', '198.51.100.23'], KEY)).toBe(200);
      const requestLines = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.includes('"msg":"request"') && line.includes('/webhooks/'));
      await until(() => requestLines().length >= 1);
      expect(requestLines().map((line) => (JSON.parse(line) as { remote?: string }).remote)).toEqual(['127.0.0.1']);
      expect(server.output()).not.toContain('198.51.100.23');
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
