import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeService, SERVICES } from './services.js';
import { servicesSummary } from './services-reporter.js';

/** How `npm test` finds the machine's services, and what it says when one is missing. */

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A port on 127.0.0.1 that accepts connections and then says nothing, or `reply` to whatever comes. */
async function listening(reply?: string): Promise<number> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    if (reply !== undefined) socket.once('data', () => socket.end(reply));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function closedPort(): Promise<number> {
  const port = await listening();
  await new Promise((resolve) => servers.pop()!.close(resolve));
  return port;
}

describe('probing a service', () => {
  it('says a refused connection plainly, naming the address and the variable that chose it, never its password', async () => {
    const port = await closedPort();
    const state = await probeService(SERVICES.postgres, {
      TEST_DATABASE_URL: `postgres://postgres:s3cret@127.0.0.1:${port}/test`,
    });
    expect(state).toEqual({
      available: false,
      url: `postgres://postgres:s3cret@127.0.0.1:${port}/test`,
      why: `PostgreSQL at 127.0.0.1:${port} (TEST_DATABASE_URL): connection refused`,
      hint: 'start it or correct TEST_DATABASE_URL',
    });
  });

  it('gives up on a port that never answers within the time-out', async () => {
    const port = await listening();
    const state = await probeService(SERVICES.nats, { TEST_NATS_URL: `nats://127.0.0.1:${port}` }, 200);
    expect(state).toMatchObject({
      available: false,
      why: `NATS at 127.0.0.1:${port} (TEST_NATS_URL): no answer within 0.2 s`,
    });
  });

  it('takes only an answer in the service’s own protocol', async () => {
    const port = await listening('HTTP/1.1 400 Bad Request\r\n\r\n');
    expect(await probeService(SERVICES.redis, { TEST_REDIS_URL: `redis://127.0.0.1:${port}` }, 1000)).toMatchObject({
      available: false,
    });
    const pong = await listening('+PONG\r\n');
    expect(await probeService(SERVICES.redis, { TEST_REDIS_URL: `redis://127.0.0.1:${pong}` }, 1000)).toEqual({
      available: true,
      url: `redis://127.0.0.1:${pong}`,
    });
  });

  it('uses the default address when the variable is unset, and says how to choose another', async () => {
    const state = await probeService({ ...SERVICES.redis, fallback: `redis://127.0.0.1:${await closedPort()}` }, {});
    expect(state).toMatchObject({ available: false, hint: 'start it or set TEST_REDIS_URL' });
    expect(state.available || state.why).not.toContain('(TEST_REDIS_URL)');
  });
});

describe('the summary at the end of the run', () => {
  const missing = {
    why: 'PostgreSQL at 127.0.0.1:5432: connection refused',
    hint: 'start it or set TEST_DATABASE_URL',
  };

  it('is empty when every test that needs a service found it', () => {
    expect(servicesSummary([{ file: 'test/a.test.ts', missing: {}, skipped: 2 }])).toEqual([]);
  });

  it('says, per missing service, why, how many tests it skipped and where, and what to do', () => {
    expect(
      servicesSummary([
        { file: 'test/replicas.test.ts', missing: { postgres: missing }, skipped: 1 },
        { file: 'test/webhook.test.ts', missing: {}, skipped: 0 },
        { file: 'test/postgres-store.test.ts', missing: { postgres: missing }, skipped: 41 },
      ]),
    ).toEqual([
      'Service tests not run:',
      '  PostgreSQL at 127.0.0.1:5432: connection refused — 42 tests skipped (test/postgres-store.test.ts, test/replicas.test.ts); start it or set TEST_DATABASE_URL',
    ]);
  });
});
