import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Transform } from 'node:stream';

/**
 * A TCP proxy in front of one of the machine's services, so a test can stop "the service" for a while without
 * stopping the real one that other test files share: `down()` cuts every connection and refuses new ones (the port
 * stops listening), `up()` listens again on the same port.
 */
export interface TcpProxy {
  port: number;
  /** The service's URL with its host and port replaced by the proxy's. */
  url(serviceUrl: string): string;
  /** Client connections open through the proxy now: a test can see a client reuse one and close it. */
  readonly connections: number;
  /**
   * From now on the service's replies are dropped while what clients send still reaches it: a write the service
   * made is never confirmed to the client, as when a process dies between a write and its record.
   */
  holdReplies(): void;
  passReplies(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(serviceUrl: string, defaultPort: number): Promise<TcpProxy> {
  const target = new URL(serviceUrl);
  const targetPort = Number(target.port || defaultPort);
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  let server: Server | undefined;
  let holding = false;

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, target.hostname);
        clients.add(client);
        client.on('close', () => clients.delete(client));
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        const gate = new Transform({ transform: (chunk, _encoding, done) => done(null, holding ? undefined : chunk) });
        client.pipe(upstream).pipe(gate).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        server = s;
        resolve((s.address() as AddressInfo).port);
      });
    });

  const stop = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };

  const port = await listen(0);
  return {
    port,
    url(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    get connections() {
      return clients.size;
    },
    holdReplies: () => void (holding = true),
    passReplies: () => void (holding = false),
    down: stop,
    async up() {
      if (!server) await listen(port);
    },
    close: stop,
  };
}
