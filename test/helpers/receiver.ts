import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Responder = (req: Received, res: ServerResponse, count: number) => unknown;

export interface Receiver {
  url: string;
  received: Received[];
  /** Changes how the next requests are answered. */
  respond(responder: Responder): void;
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 standing in for a sink's receiver: it records and answers as scripted. */
export async function startReceiver(
  responder: Responder = (_req, res) => res.writeHead(200).end('ok'),
): Promise<Receiver> {
  const received: Received[] = [];
  let answer = responder;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      void answer(entry, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    respond(next) {
      answer = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
