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
