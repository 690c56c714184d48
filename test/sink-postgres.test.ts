import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from './helpers/database.js';
import { adminApi, post, sampleCall, spawnServer, startServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

/**
 * The `postgres` sink in a running receiver (docs/reference.md#queues-and-databases): one row per call, exactly once
 * downstream, through a redeliver, a `kill -9` mid-delivery and the database away for a while; `url` taken from
 * DATABASE_URL when left out; a table whose key cannot drop repeats makes the delivery dead at once.
 */

const url = serviceUrl('postgres');
/** Retries a failed attempt soon, so a test waits for the database, not for the default schema. */
const quickRetry = { attempts: 100, schedule: ['100ms'], jitter: 0 };

type Detail = {
  record: Record<string, unknown>;
  deliveries: { sink: string; state: string }[];
  attempts: { sink: string; outcome: string; error?: string | null }[];
};

describe.skipIf(!url)('the postgres sink in a running receiver', () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let admin: pg.Client;
  let counter = 0;

  beforeAll(async () => {
    db = await freshDatabase(url!, 'callhook_sinke2e');
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  const table = () => `calls_${++counter}`;
  const rows = async (sql: string, values: unknown[] = []) => (await admin.query(sql, values)).rows;
  const count = async (name: string) => ((await rows(`SELECT count(*)::int AS n FROM ${name}`))[0] as { n: number }).n;
  const detail = async (server: { url: string }, id: string) => (await adminApi<Detail>(server, `/calls/${id}`)).body;
  const postCall = async (server: { url: string }, call = sampleCall()) =>
    ((await (await post(server.url, call)).json()) as { id: string }).id;
  const done = async (server: { url: string }, id: string, okAttempts = 1) => {
    const d = await detail(server, id);
    return (
      d.deliveries.every((x) => x.state === 'done') && d.attempts.filter((a) => a.outcome === 'ok').length >= okAttempts
    );
  };

  it('writes each call as a row of the record’s fields, and a redelivered call leaves that one row', async () => {
    const name = table();
    const server = await startServer({
      config: { sinks: [{ name: 'pg', type: 'postgres', url: db.url, table: name, retry: quickRetry }] },
    });
    try {
      const ids = [
        await postCall(server),
        await postCall(server, sampleCall({ email_address: 'not-an-email', extra_field: 'x' })),
      ];
      for (const id of ids) await until(() => done(server, id));
      for (const id of ids) {
        const { record } = await detail(server, id);
        const [row] = await rows(
          `SELECT id, hook, dedup_key, to_json(received_at) #>> '{}' AS received_at, source, revision, data, extra, problems FROM ${name} WHERE id = $1`,
          [id],
        );
        expect({ ...row, received_at: new Date(row.received_at).toISOString() }).toEqual({
          id,
          hook: record.hook,
          dedup_key: record.dedup_key,
          received_at: record.received_at,
          source: record.source,
          revision: 1,
          data: record.data,
          extra: record.extra,
          problems: record.problems,
        });
      }
      await adminApi(server, `/calls/${ids[0]}/redeliver`, { method: 'POST' });
      await until(() => done(server, ids[0]!, 2));
      expect(await count(name)).toBe(2);
      expect(await rows(`SELECT id FROM ${name} WHERE id = $1`, [ids[0]])).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('writes to callhook_calls through DATABASE_URL when the sink gives no url', async () => {
    const server = await startServer({
      env: { DATABASE_URL: db.url },
      config: { sinks: [{ name: 'pg', type: 'postgres', retry: quickRetry }] },
    });
    try {
      const id = await postCall(server);
      await until(() => done(server, id));
      expect(await rows('SELECT id, revision FROM callhook_calls')).toEqual([{ id, revision: 1 }]);
    } finally {
      await server.close();
    }
  });

  it('makes the delivery dead at its first attempt when the key column cannot drop repeats', async () => {
    const name = table();
    await admin.query(`CREATE TABLE ${name} (id text, phone text)`);
    const server = await startServer({
      config: {
        sinks: [
          {
            name: 'pg',
            type: 'postgres',
            url: db.url,
            table: name,
            columns: { id: '{{ id }}', phone: '{{ phone_number }}' },
            retry: quickRetry,
          },
        ],
      },
    });
    try {
      const id = await postCall(server);
      const d = (await until(async () => {
        const got = await detail(server, id);
        return got.deliveries[0]!.state === 'dead' && got.attempts.length > 0 ? got : undefined;
      }))!;
      expect(d.attempts).toEqual([expect.objectContaining({ outcome: 'dead' })]);
      expect(d.attempts[0]!.error).toBe(
        `postgres 127.0.0.1:5432: key_column "id" of table public.${name} must be the primary key or carry a unique index (on that column alone, with no WHERE), so that a delivery made again meets its row`,
      );
      expect(await count(name)).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('delivers every call once the database is back after being away', async () => {
    const proxy = await startTcpProxy(url!, 5432);
    const name = table();
    const server = await startServer({
      config: { sinks: [{ name: 'pg', type: 'postgres', url: proxy.url(db.url), table: name, retry: quickRetry }] },
    });
    try {
      const ids = [await postCall(server)];
      await until(() => done(server, ids[0]!));
      // Cuts the pooled connection too: the sink must open another when the database is back.
      await proxy.down();
      for (let i = 0; i < 5; i++) ids.push(await postCall(server));
      // Each call has failed at least once against the missing database, and is waiting to be tried again.
      await until(async () =>
        (await Promise.all(ids.slice(1).map((id) => detail(server, id)))).every((d) => d.attempts.length >= 1),
      );
      const failed = await detail(server, ids[1]!);
      expect(failed.attempts[0]).toMatchObject({
        outcome: 'retry',
        error: expect.stringMatching(new RegExp(`^postgres 127\\.0\\.0\\.1:${proxy.port}: `)),
      });
      await proxy.up();
      await until(async () => (await Promise.all(ids.map((id) => done(server, id)))).every(Boolean), {
        timeoutMs: 20_000,
      });
      expect((await rows(`SELECT id FROM ${name} ORDER BY id`)).map((r) => r.id)).toEqual([...ids].sort());
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  it('after kill -9 mid-delivery and a restart, has one row per call, every repeated delivery done', {
    timeout: 60_000,
  }, async () => {
    const name = table();
    // Every INSERT the sink makes is logged, a repeat too (a BEFORE trigger fires before ON CONFLICT looks), and
    // takes 20 ms, so deliveries are mid-statement when the process dies.
    await admin.query(`CREATE TABLE ${name}_tries (id uuid NOT NULL)`);
    await admin.query(
      `CREATE TABLE ${name} (id uuid PRIMARY KEY, hook text, dedup_key text, received_at timestamptz, source text, revision integer, data jsonb, extra jsonb, problems jsonb)`,
    );
    await admin.query(`CREATE FUNCTION ${name}_try() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO ${name}_tries VALUES (NEW.id); PERFORM pg_sleep(0.02); RETURN NEW; END $$`);
    await admin.query(`CREATE TRIGGER slow BEFORE INSERT ON ${name} FOR EACH ROW EXECUTE FUNCTION ${name}_try()`);

    const dataDir = tempDir();
    const config = join(dataDir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ sinks: [{ name: 'pg', type: 'postgres', url: db.url, table: name, retry: quickRetry }] }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    const first = await spawnServer(dataDir, env);
    const posting = Array.from({ length: 150 }, () =>
      post(first.url, sampleCall()).then(
        async (res) => (res.status === 200 ? ((await res.json()) as { id: string }).id : undefined),
        () => undefined,
      ),
    );
    await until(async () => (await count(name)) >= 10, { everyMs: 5 });
    first.child.kill('SIGKILL');
    await first.exited;
    const accepted = (await Promise.all(posting)).filter((id): id is string => id !== undefined);
    const second = await spawnServer(dataDir, env);
    try {
      const server = { url: second.url };
      await until(async () => (await Promise.all(accepted.map((id) => done(server, id)))).every(Boolean), {
        timeoutMs: 40_000,
        everyMs: 200,
      });
      const written = new Set((await rows(`SELECT id FROM ${name}`)).map((r) => r.id as string));
      for (const id of accepted) expect(written.has(id)).toBe(true);
      // A call whose reply the kill cut off may be stored and delivered too: still one row each.
      expect(await count(name)).toBe(written.size);
      const dead = (await adminApi<{ deliveries: unknown[] }>(server, '/deliveries?state=dead&sink=pg')).body;
      expect(dead.deliveries).toEqual([]);
      // Some deliveries were made again after the restart, and met the row their first try had written.
      expect(await count(`${name}_tries`)).toBeGreaterThan(written.size);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
