import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonlRecords, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/** Two receivers sharing one PostgreSQL, as replicas behind a load balancer would (docs/reference.md#deduplication). */

const url = serviceUrl('postgres');

describe.skipIf(!url)('replicas sharing PostgreSQL', () => {
  const database = `callhook_e2e_${randomBytes(6).toString('hex')}`;
  let admin: pg.Client;
  let db: pg.Client;
  let replicas: TestServer[] = [];

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const databaseUrl = new URL(url!);
    databaseUrl.pathname = `/${database}`;
    replicas = await Promise.all([0, 1].map(() => startServer({ env: { DATABASE_URL: databaseUrl.toString() } })));
    db = new pg.Client({ connectionString: databaseUrl.toString() });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await Promise.all(replicas.map((r) => r.close()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  const jsonlIds = (r: TestServer): string[] => jsonlRecords(r.dataDir).map((record) => record.id);

  it('stores one record and makes one delivery per sink for twenty copies of a call spread over both', async () => {
    const call = sampleCall({ call_id: 'replica-burst' });
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(replicas[i % 2]!.url, call).then((r) => r.json())),
    );
    expect(replies.filter((r) => r.status === 'accepted')).toHaveLength(1);
    expect(replies.filter((r) => r.status === 'duplicate')).toHaveLength(19);
    expect(new Set(replies.map((r) => r.id)).size).toBe(1);

    const id = replies[0].id as string;
    await until(() => replicas.some((r) => jsonlIds(r).includes(id)));
    await new Promise((r) => setTimeout(r, 300));
    expect(replicas.flatMap(jsonlIds).filter((x) => x === id)).toHaveLength(1);
    const { rows } = await db.query(
      `SELECT duplicates, (SELECT COUNT(*)::int FROM deliveries WHERE call_id = $1) AS deliveries FROM calls WHERE id = $1`,
      [id],
    );
    expect(rows).toEqual([{ duplicates: 19, deliveries: 2 }]);
  });
});
