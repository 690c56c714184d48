import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A sink endpoint that accepts every request and answers only after `holdMs`: the worst downstream system, one
 * that neither fails nor answers. It lives in the bench process because it does nothing but hold sockets.
 */

export interface HangingSink {
  url: string;
  /** Requests received so far: proves callhook did try to deliver to it. */
  received(): number;
  close(): Promise<void>;
}

export async function startHangingSink(holdMs = 30_000): Promise<HangingSink> {
  const timers = new Set<NodeJS.Timeout>();
  let received = 0;
  const server: Server = createServer((req, res) => {
    received++;
    req.resume();
    const timer = setTimeout(() => {
      timers.delete(timer);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    }, holdMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
