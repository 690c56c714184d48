import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';

/**
 * Headers read and set on Node's own request and reply when @hono/node-server serves the app.
 *
 * `c.req.header()` reads the web Headers of the request, which @hono/node-server builds from the raw headers,
 * validating every one, the first time any is read; `c.header()` makes the reply carry a web Headers too, which
 * takes it off the adapter's plain-object path. On the webhook route those two were a fifth of the event loop's
 * time a request (bench/results.md). Node has already parsed the headers (`incoming.headers`: names in lower case,
 * a repeated Authorization or Content-Type dropped as Node drops them, other repeats joined with ", "), and a
 * header set on `outgoing` is merged into the reply when it is written. Outside @hono/node-server (`app.request`
 * in tests) both go through Hono.
 */

function bindings(c: Context): Partial<HttpBindings> | undefined {
  return c.env as Partial<HttpBindings> | undefined;
}

/** A request header by its name in lower case; undefined when the request has none. */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = bindings(c)?.incoming;
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A header for whatever reply this request gets, an error's included. */
export function setReplyHeader(c: Context, name: string, value: string): void {
  const outgoing = bindings(c)?.outgoing;
  if (outgoing && !outgoing.headersSent) outgoing.setHeader(name, value);
  else c.header(name, value);
}

/** How long a connection refused mid-body goes on reading before it is closed (lingerOnClose). */
export const LINGER_MS = 2_000;

/**
 * Once this request's reply is written, its connection closes the way RFC 9112 section 9.6 asks when the client may
 * still be sending a body that was never read: our side is shut (the client reads the reply, then end of stream), and
 * whatever still arrives is read and dropped, for at most LINGER_MS, until the client closes its side. Closed at once,
 * with unread bytes, the kernel answers the client's next write with a reset, and a client still sending its body
 * (`curl` with a large upload) loses the reply it had not read yet. Outside @hono/node-server it does nothing.
 */
export function lingerOnClose(c: Context): void {
  const socket = bindings(c)?.incoming?.socket;
  if (!socket) return;
  // Node's HTTP server closes a `Connection: close` socket with destroySoon() once the reply is written.
  socket.destroySoon = () => {
    socket.end();
    socket.removeAllListeners('data');
    socket.on('data', () => undefined);
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
  };
}
