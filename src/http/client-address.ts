import { isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { requestHeader } from './node-headers.js';

/**
 * The address a request is counted and logged under: the auth limiter's key and the request log's `remote`.
 *
 * docs/reference.md#exposure, `trust_proxy`: when true, the client's address is the last `X-Forwarded-For` hop, the one
 * the proxy in front of callhook added; every hop before it was written by whoever sent the request, and could be
 * anything. Several X-Forwarded-For headers are one list (RFC 9110 section 5.3: a repeated list header means its
 * values joined by commas; Node joins this one so). A last hop that is no address (empty, garbage) is not trusted:
 * the peer's address is used, as without a proxy. When false, or when nothing says otherwise, the peer's address.
 */
export function clientAddress(c: Context, trustProxy: boolean): string {
  const peer = peerAddress(c);
  if (!trustProxy) return peer;
  const last = requestHeader(c, 'x-forwarded-for')?.split(',').at(-1);
  return (last !== undefined && hopAddress(last)) || peer;
}

/** The TCP peer's address; behind a reverse proxy this is the proxy's. */
export function peerAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown'; // not served by @hono/node-server (app.request in tests)
  }
}

/**
 * One hop as proxies write it: an IPv4 or IPv6 address, an IPv6 one in brackets, either with a port (some proxies
 * add it); the address alone, so one client is one key whichever port it came from. Anything else is undefined.
 */
function hopAddress(hop: string): string | undefined {
  const text = hop.trim();
  if (isIP(text)) return text;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text)?.[1];
  if (bracketed !== undefined) return isIP(bracketed) === 6 ? bracketed : undefined;
  const withPort = /^([\d.]+):\d{1,5}$/.exec(text)?.[1];
  return withPort !== undefined && isIP(withPort) === 4 ? withPort : undefined;
}
