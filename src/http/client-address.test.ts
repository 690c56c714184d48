import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { clientAddress } from './client-address.js';

/** Answers the address as @hono/node-server would see it: a peer, and headers as Node parsed them. */
async function addressOf(
  trustProxy: boolean,
  forwarded: string | string[] | undefined,
  peer = '10.0.0.5',
): Promise<string> {
  const app = new Hono().get('/', (c) => c.text(clientAddress(c, trustProxy)));
  // Node joins repeated X-Forwarded-For lines with ", " in incoming.headers (test/trust-proxy.test.ts sends two).
  const headers =
    forwarded === undefined ? {} : { 'x-forwarded-for': Array.isArray(forwarded) ? forwarded.join(', ') : forwarded };
  const incoming = { socket: { remoteAddress: peer }, headers };
  return (await app.request('/', {}, { incoming })).text();
}

describe('clientAddress', () => {
  it('is the peer when the proxy is not trusted, whatever X-Forwarded-For says', async () => {
    expect(await addressOf(false, '203.0.113.7')).toBe('10.0.0.5');
    expect(await addressOf(false, undefined)).toBe('10.0.0.5');
  });

  it.each<[string, string | string[] | undefined, string]>([
    ['the only hop', '203.0.113.7', '203.0.113.7'],
    ['the last hop, the one the proxy added', 'spoofed-by-client, 198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ['the last hop of several headers, read as one list', ['198.51.100.1', '192.0.2.9,  203.0.113.7 '], '203.0.113.7'],
    ['an IPv6 hop', '2001:db8::1', '2001:db8::1'],
    ['an IPv6 hop in brackets with a port', '[2001:db8::1]:4711', '2001:db8::1'],
    ['an IPv4 hop with a port', '203.0.113.7:4711', '203.0.113.7'],
    ['the peer without the header', undefined, '10.0.0.5'],
    ['the peer for an empty header', '', '10.0.0.5'],
    ['the peer for an empty last hop', '203.0.113.7, ', '10.0.0.5'],
    ['the peer for garbage', 'unknown', '10.0.0.5'],
    ['the peer for a name', 'proxy.internal', '10.0.0.5'],
  ])('when trusted, is %s', async (_name, forwarded, expected) => {
    expect(await addressOf(true, forwarded)).toBe(expected);
  });

  it('reads the header through Hono outside @hono/node-server, with no peer to fall back to', async () => {
    const app = new Hono().get('/', (c) => c.text(clientAddress(c, true)));
    expect(await (await app.request('/', { headers: { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' } })).text()).toBe(
      '203.0.113.7',
    );
    expect(await (await app.request('/')).text()).toBe('unknown');
  });
});
