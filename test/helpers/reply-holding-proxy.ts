import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of one of the machine's services that can swallow the service's replies: what the client
 * sends still reaches the service and is done there, but the client never learns that it was, as when a process
 * dies between a write and its record. For the kill -9 tests of the sinks that must drop a repeat downstream
 * (contract section 9). (test/sink-redis-stream.test.ts keeps a copy of its own, written before this file.)
 */
export interface ReplyHoldingProxy {
  port: number;
  /** The service's URL with its host and port replaced by the proxy's. */
  url(serviceUrl: string): string;
  holdReplies(): void;
  passReplies(): void;
  close(): Promise<void>;
}

export async function startReplyHoldingProxy(serviceUrl: string, defaultPort: number): Promise<ReplyHoldingProxy> {
  const target = new URL(serviceUrl);
  let holding = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || defaultPort), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream);
    upstream.on('data', (chunk) => holding || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    holdReplies: () => (holding = true),
    passReplies: () => (holding = false),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
