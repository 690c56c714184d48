import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { RequestIdVariables } from 'hono/request-id';
import { requestHeader, setReplyHeader } from './node-headers.js';

const HEADER = 'x-request-id';
/** What hono/request-id accepts from a client: short, and nothing that could break a log line or a header. */
const ACCEPTED = /^[\w\-=]{1,255}$/;

/**
 * hono/request-id's behaviour (a client's `X-Request-Id` kept when it is plain, else a random UUID, sent back
 * on the reply), with the header read and set on Node's request and reply (node-headers.ts): hono's reads and
 * sets them through web Headers, which cost more than the rest of the middleware on every webhook request.
 */
export function requestId(): MiddlewareHandler<{ Variables: RequestIdVariables }> {
  return async function requestId(c, next) {
    const given = requestHeader(c, HEADER);
    const id = given !== undefined && ACCEPTED.test(given) ? given : randomUUID();
    c.set('requestId', id);
    setReplyHeader(c, HEADER, id);
    await next();
  };
}
