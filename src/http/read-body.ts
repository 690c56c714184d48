import type { Context } from 'hono';
import { CallhookError } from '../errors.js';
import { lingerOnClose, requestHeader, setReplyHeader } from './node-headers.js';

/**
 * Reads a request body once, refusing it with 413 past `limit` bytes while it streams.
 *
 * hono/body-limit is not used: it reads through the web `Request` body stream, which makes @hono/node-server
 * build a full web Request (AbortController, undici Request, stream) for every call; at load that was a tenth of
 * the CPU (bench/results.md). With a Content-Length, `arrayBuffer()` takes the adapter's direct path from the
 * Node stream, and Node's HTTP parser never delivers more bytes than the header said. A chunked body has no
 * length to check up front, so it is counted as it arrives.
 */
export async function readBody(c: Context, limit: number): Promise<Uint8Array> {
  const declared = requestHeader(c, 'content-length');
  if (declared !== undefined && requestHeader(c, 'transfer-encoding') === undefined) {
    // Per RFC 9112 section 6.3, Transfer-Encoding wins over Content-Length when both are sent.
    if (Number(declared) > limit) throw tooLarge(c, limit);
    return new Uint8Array(await guard(c.req.arrayBuffer()));
  }
  const stream = c.req.raw.body;
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await guard(reader.read());
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(c, limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function guard<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (cause) {
    // The client went away, or sent fewer bytes than its Content-Length.
    throw new CallhookError('BAD_BODY', 'the body could not be read', { cause });
  }
}

function tooLarge(c: Context, limit: number): CallhookError {
  // The rest of the body is never read, so the connection cannot carry another request: say so (RFC 9112 9.6).
  setReplyHeader(c, 'connection', 'close');
  lingerOnClose(c);
  return new CallhookError('BODY_TOO_LARGE', `at most ${limit} bytes`);
}
