import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node answers a request it cannot parse (malformed HTTP, headers too large, a client too slow) before any route
 * sees it, with a bare status line. This gives those replies the same Error object as every other one
 * (docs/reference.md#receiving), and says which limit was hit.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] = describe(err.code);
  const body = JSON.stringify({ error: status, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function describe(code: string | undefined): [number, string] {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'The request took too long to arrive'];
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'The request headers are too large'];
    default:
      return [400, 'The request is not valid HTTP'];
  }
}
