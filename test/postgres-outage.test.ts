import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { commitInput, unique } from './helpers/store-inputs.js';

/**
 * The real PostgreSQL stops answering mid-run, as behind a network that drops packets for a while: callhook talks
 * to it through a TCP relay that can be frozen (every connection stays open, nothing is forwarded, what is sent
 * waits) and thawed (what waited arrives, as TCP's retransmissions would deliver it once the network heals). It
 * can also cut off the connections it has (they stay open and nothing on them ever arrives, as when the server
 * behind an address vanished) while new ones go through, as to a new server after a failover.
 */

const url = serviceUrl('postgres');

interface Relay {
  port: number;
  freeze(): void;
  thaw(): void;
  cutOff(): void;
  close(): Promise<void>;
}

async function startRelay(target: URL): Promise<Relay> {
  let frozen = false;
  const flushes = new Set<() => void>();
  const cut = new WeakSet<Socket>();
  const sockets = new Set<Socket>();
  // One direction of one connection: forwards at once, or holds until the thaw.
  const forward = (from: Socket, to: Socket) => {
    const held: Buffer[] = [];
    const flush = () => {
      for (const chunk of held.splice(0)) to.write(chunk);
    };
    flushes.add(flush);
    from.on('data', (chunk: Buffer) => {
      if (cut.has(from)) return;
      if (frozen) held.push(chunk);
      else to.write(chunk);
    });
    from.on('close', () => (flushes.delete(flush), to.destroy()));
    from.on('error', () => to.destroy());
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze: () => void (frozen = true),
    thaw: () => {
      frozen = false;
      for (const flush of flushes) flush();
    },
    cutOff: () => {
      for (const s of sockets) cut.add(s);
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.skipIf(!url)('PostgreSQL that stops answering', () => {
  const database = `callhook_outage_${randomBytes(6).toString('hex')}`;
  let admin: pg.Client;
  let relay: Relay;
  let server: TestServer;
  let databaseUrl: URL;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    databaseUrl = new URL(url!);
    databaseUrl.pathname = `/${database}`;
    relay = await startRelay(databaseUrl);
    const through = new URL(databaseUrl);
    through.host = `127.0.0.1:${relay.port}`;
    // A short store_deadline, so the test does not wait the 8 s default for its 503 (docs/reference.md#replies).
    server = await startServer({ env: { DATABASE_URL: through.toString() }, config: { store_deadline: '2s' } });
  });
  afterAll(async () => {
    relay.thaw();
    await server?.close();
    await relay?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('gets a 503 and an unready receiver inside the sender’s 10 s, and stores every call once when it is back', {
    timeout: 60_000,
  }, async () => {
    expect((await post(server.url, sampleCall({ call_id: 'before' }))).status).toBe(200);

    relay.freeze();
    const frozenAt = Date.now();
    const [during, ready] = await Promise.all([
      post(server.url, sampleCall({ call_id: 'during' })),
      fetch(`${server.url}/readyz`),
    ]);
    // Both at the configured deadline, which serve passes to the routes.
    expect(Date.now() - frozenAt).toBeLessThan(4_000);
    expect(during.status).toBe(503);
    expect(await during.json()).toEqual({ error: 503, message: 'The store cannot commit the call right now' });
    expect(ready.status).toBe(503);
    // Which check failed, not why: the reason goes to the log (docs/reference.md#operating).
    expect((await ready.json()).checks.store).toBe('failing');

    relay.thaw();
    await until(async () => (await fetch(`${server.url}/readyz`)).status === 200, { timeoutMs: 30_000 });
    expect((await post(server.url, sampleCall({ call_id: 'after' }))).status).toBe(200);
    // The refused call may have committed once its packets got through, or never have reached the server. Sent
    // again (the sender does not, an operator may), it is stored either way, and once.
    const again = (await (await post(server.url, sampleCall({ call_id: 'during' }))).json()) as { status: string };
    expect(['accepted', 'duplicate']).toContain(again.status);

    const db = new pg.Client({ connectionString: databaseUrl.toString() });
    await db.connect();
    try {
      const { rows } = await db.query<{ dedup_key: string }>('SELECT dedup_key FROM calls ORDER BY dedup_key');
      expect(rows.map((r) => r.dedup_key)).toEqual(['call_id:after', 'call_id:before', 'call_id:during']);
    } finally {
      await db.end();
    }
  });
});

describe.skipIf(!url)('PostgreSQL that vanishes behind its address', () => {
  const schema = `outage_${randomBytes(6).toString('hex')}`;
  let admin: pg.Client;
  let relay: Relay;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    relay = await startRelay(new URL(url!));
  });
  afterAll(async () => {
    await relay?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('gives up the connections that hang and commits again on new ones', { timeout: 30_000 }, async () => {
    const through = new URL(url!);
    through.host = `127.0.0.1:${relay.port}`;
    const store = await openPostgresStore({ url: through.toString(), schema, poolSize: 2, queryTimeoutMs: 500 });
    try {
      // Both pooled connections open and in use.
      await Promise.all([
        store.commitCall(commitInput('end-of-call', unique('call_id:vanish'), [])),
        store.commitCall(commitInput('end-of-call', unique('call_id:vanish'), [])),
      ]);

      relay.cutOff();
      const hung = await Promise.allSettled([
        store.commitCall(commitInput('end-of-call', unique('call_id:vanish'), [])),
        store.commitCall(commitInput('end-of-call', unique('call_id:vanish'), [])),
      ]);
      expect(hung.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      // Each hung connection is closed, so the next commits open new ones, which reach the server.
      const after = await store.commitCall(commitInput('end-of-call', unique('call_id:vanish'), []));
      expect(after.outcome).toBe('accepted');
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.calls WHERE id = $1`, [after.id]);
      expect(rows[0].n).toBe(1);
    } finally {
      await store.close();
    }
  });
});
