import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../src/normalize/dedup-key.js';
import type { CallRecord } from '../src/record.js';
import type { ListCallsQuery } from '../src/store/admin-queries.js';
import { CALLER_HISTORY_SQL, callsPageQuery, DELIVERY_STATS_SQL } from '../src/store/postgres/admin.js';
import { POSTGRES_MIGRATIONS } from '../src/store/postgres/schema.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { serviceUrl } from './helpers/services.js';
import { commitInput } from './helpers/store-inputs.js';
import { storeAdminContract } from './store-admin-contract.js';
import { storeCallsContract } from './store-calls-contract.js';
import {
  type AttemptRow,
  type CountRow,
  type DeliveryRow,
  expectKeptByMigration4,
  ODD_RECORDS,
  OLD_INSERT_COLUMNS,
  type ReceiptRow,
  type StorePeek,
  storeContract,
} from './store-contract.js';
import { storeEditsContract } from './store-edits-contract.js';
import { storeIncidentsContract } from './store-incidents-contract.js';
import { storePeriodContract } from './store-period-contract.js';
import { storeRetentionContract } from './store-retention-contract.js';
import { storeSinksContract } from './store-sinks-contract.js';

const url = serviceUrl('postgres');
const freshSchema = () => `callhook_test_${randomBytes(6).toString('hex')}`;

describe.skipIf(!url)('postgres store', () => {
  const schema = freshSchema();
  const dropped: string[] = [schema];
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const name of dropped) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    await admin.end();
  });

  const peek: StorePeek = {
    receipts: async (hook) => {
      const { rows } = await admin.query<ReceiptRow>(
        `SELECT outcome, status, call_id AS "callId", raw_body AS "rawBody", ingested_as AS "ingestedAs"
         FROM "${schema}".receipts WHERE hook = $1 ORDER BY id`,
        [hook],
      );
      return rows;
    },
    deliveries: async (callId) => {
      const { rows } = await admin.query<DeliveryRow>(
        `SELECT sink, state, attempts FROM "${schema}".deliveries WHERE call_id = $1 ORDER BY sink`,
        [callId],
      );
      return rows;
    },
    attempts: async (deliveryId) => {
      const { rows } = await admin.query<AttemptRow>(
        `SELECT attempt, outcome, http_status AS "httpStatus" FROM "${schema}".attempts WHERE delivery_id = $1 ORDER BY id`,
        [deliveryId],
      );
      return rows;
    },
    deliveryCounts: async (sinks) => {
      const { rows } = await admin.query<CountRow>(
        `SELECT sink, state, count(*)::int AS count FROM "${schema}".deliveries WHERE sink = ANY($1) GROUP BY sink, state`,
        [sinks],
      );
      return rows;
    },
    ingested: async (hook, callId) => {
      await admin.query(
        `UPDATE "${schema}".receipts SET ingested_as = $2
         WHERE id = (SELECT max(id) FROM "${schema}".receipts WHERE hook = $1 AND outcome = 'rejected')`,
        [hook, callId],
      );
    },
  };
  storeContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }), peek);
  storeAdminContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }), peek);
  storeCallsContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }));
  storeSinksContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }), peek);
  storePeriodContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }), peek);
  storeIncidentsContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }));
  storeRetentionContract('postgres', () => {
    const own = freshSchema();
    dropped.push(own);
    return openPostgresStore({ url: url!, schema: own, poolSize: 5 });
  });
  storeEditsContract('postgres', () => openPostgresStore({ url: url!, schema, poolSize: 5 }), {
    forgetContentHash: async (callId) =>
      void (await admin.query(`UPDATE "${schema}".calls SET content_hash = NULL WHERE id = $1`, [callId])),
  });

  describe('postgres only', () => {
    it('migrates a fresh schema exactly once when replicas start together', async () => {
      const fresh = freshSchema();
      dropped.push(fresh);
      const stores = await Promise.all(
        Array.from({ length: 4 }, () => openPostgresStore({ url: url!, schema: fresh, poolSize: 2 })),
      );
      try {
        const { rows } = await admin.query<{ version: number }>(
          `SELECT version FROM "${fresh}".schema_migrations ORDER BY version`,
        );
        expect(rows.map((r) => r.version)).toEqual(POSTGRES_MIGRATIONS.map((_, i) => i + 1));
        const results = await Promise.all(
          stores.map((s) => s.commitCall(commitInput('end-of-call', 'call_id:1', ['log']))),
        );
        expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('gives the deliveries of a schema made before migration 2 their last change as creation time', async () => {
      const old = freshSchema();
      dropped.push(old);
      await admin.query(`CREATE SCHEMA "${old}"; SET search_path = "${old}"`);
      try {
        await admin.query(POSTGRES_MIGRATIONS[0]!);
        await admin.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) VALUES (1);
          INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw) VALUES ('c1', 'h', 'k', 'accepted', 'webhook', now(), '{}', '{}');
          INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at) VALUES ('c1', 'log', 'pending', 5, 1234)`);
      } finally {
        await admin.query('RESET search_path');
      }
      const store = await openPostgresStore({ url: url!, schema: old, poolSize: 1 });
      try {
        expect(await store.deliveryStats()).toEqual([
          { sink: 'log', state: 'pending', count: 1, oldestCreatedAt: 1234 },
        ]);
      } finally {
        await store.close();
      }
    });

    it('edits the calls of a schema made before migration 8: the queue finds them, an edit keeps what a repeat is compared with, a delete takes the edits', async () => {
      const old = freshSchema();
      dropped.push(old);
      const problems: CallRecord['problems'] = [
        {
          field: 'call_outcome',
          code: 'missing_required',
          message: 'call_outcome is required but was missing or empty',
        },
      ];
      // Stored before records carried a revision, by a replica that wrote no content hash; a NUL no json operator
      // reads.
      const record = {
        id: 'e1',
        hook: 'h',
        dedup_key: 'order_id:ORD-8',
        received_at: '2001-11-01T10:00:00.000Z',
        source: 'webhook' as const,
        data: { first_name: 'Asha' },
        extra: { nul: 'a\u0000b' },
        problems,
      };
      await admin.query(`CREATE SCHEMA "${old}"; SET search_path = "${old}"`);
      try {
        for (const migration of POSTGRES_MIGRATIONS.slice(0, 7)) await admin.query(migration);
        await admin.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) SELECT generate_series(1, 7)`);
        await admin.query(
          `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES ('e1', 'h', 'order_id:ORD-8', 'accepted', 'webhook', $1, $2, '{}')`,
          [record.received_at, JSON.stringify(record)],
        );
      } finally {
        await admin.query('RESET search_path');
      }
      const store = await openPostgresStore({ url: url!, schema: old, poolSize: 1 });
      try {
        expect((await store.listCalls({ hook: 'h', review: true })).map((c) => c.record.id)).toEqual(['e1']);
        const edited = { ...record, revision: 2, data: { first_name: 'Asha Rao' } };
        expect(
          await store.editCall(
            'e1',
            {
              at: new Date().toISOString(),
              fields: { first_name: { before: 'Asha', after: 'Asha Rao' } },
              revision: 2,
            },
            edited,
          ),
        ).toBe('edited');
        expect((await store.getCall('e1'))?.record).toEqual(edited);
        expect((await store.listCalls({ hook: 'h', review: true })).map((c) => c.record.id)).toEqual(['e1']);
        const repeat = {
          ...commitInput('h', 'order_id:ORD-8', [], Date.now(), record.data),
          contentHash: contentHash(record.data, record.extra, problems),
        };
        expect(await store.commitCall(repeat)).toEqual({ outcome: 'duplicate', id: 'e1' });
      } finally {
        await store.close();
      }
      // A replica of the version before deletes the call as it always did: its edits go with it (ON DELETE CASCADE).
      await admin.query(`DELETE FROM "${old}".calls WHERE id = 'e1'`);
      expect((await admin.query(`SELECT count(*)::int AS n FROM "${old}".call_edits`)).rows[0].n).toBe(0);
    });

    it('keeps the calls of a schema made before migration 4 with their keys, revision 1 and the hash of their content', async () => {
      const old = freshSchema();
      dropped.push(old);
      const record = {
        id: 'c1',
        hook: 'h',
        dedup_key: 'order_id:ORD-1',
        received_at: '2026-11-01T10:00:00.000Z',
        source: 'webhook',
        data: { call_outcome: 'order placed', call_cost: 1.5 },
        extra: { nul: 'a\u0000b' },
        problems: [],
      };
      await admin.query(`CREATE SCHEMA "${old}"; SET search_path = "${old}"`);
      try {
        for (const migration of POSTGRES_MIGRATIONS.slice(0, 3)) await admin.query(migration);
        await admin.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) VALUES (1), (2), (3)`);
        await admin.query(
          `INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw) VALUES ('c1', 'h', 'order_id:ORD-1', 'accepted', 'webhook', $1, $2, '{}')`,
          [record.received_at, JSON.stringify(record)],
        );
        for (const [key, text] of ODD_RECORDS) {
          await admin.query(
            `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES ($1, 'h', $1, 'accepted', 'webhook', now(), $2, '{}')`,
            [key, text],
          );
        }
      } finally {
        await admin.query('RESET search_path');
      }
      const store = await openPostgresStore({ url: url!, schema: old, poolSize: 1 });
      try {
        // A replica of the version before, still serving during a rolling upgrade: its insert names no new column.
        await expectKeptByMigration4(store, record, async (id, key, text) => {
          await admin.query(
            `INSERT INTO "${old}".calls (${OLD_INSERT_COLUMNS}) VALUES ($1, 'h', $2, 'accepted', 'webhook', now(), $3, '{}') ON CONFLICT (hook, dedup_key) DO NOTHING`,
            [id, key, text],
          );
        });
      } finally {
        await store.close();
      }
    });

    it("can read a caller's history through the calls_phone index, backward for newest first", async () => {
      // A test table is too small for the planner to prefer an index; turning the alternatives off asks only
      // whether the index can serve the query (the expression must match dataField's character for character).
      await (await openPostgresStore({ url: url!, schema, poolSize: 1 })).close(); // migrated, whether or not the contracts ran first
      const plan = async (sql: string, values: unknown[]) => {
        await admin.query(
          `BEGIN; SET LOCAL search_path = "${schema}"; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off`,
        );
        try {
          return (await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values)).rows
            .map((row) => row['QUERY PLAN'])
            .join('\n');
        } finally {
          await admin.query('ROLLBACK');
        }
      };
      expect(await plan(CALLER_HISTORY_SQL.count, ['+14155550100'])).toMatch(
        /Index (Only )?Scan using calls_phone on calls/,
      );
      const calls = await plan(CALLER_HISTORY_SQL.calls, ['+14155550100', 5]);
      expect(calls).toMatch(/Index Scan Backward using calls_phone on calls/);
      expect(calls).not.toMatch(/Sort/);
    });

    it('can read a page of calls that are not test traffic, and the review queue, through the calls_live index, without a sort (docs/reference.md#test-traffic)', async () => {
      await (await openPostgresStore({ url: url!, schema, poolSize: 1 })).close(); // migrated, whether or not the contracts ran first
      // As above, with what the index is for: thousands of simulated calls, the newest, which a page of the others
      // must not read (the planner must also prove the index's predicate from the query's WHERE). Rolled back, the
      // statistics with them.
      const plan = async (query: ListCallsQuery) => {
        const { text, values } = callsPageQuery(query);
        await admin.query(
          `BEGIN; SET LOCAL search_path = "${schema}"; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;
           INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw)
             SELECT 'zz' || g, 'simulated', 'call_id:' || g, 'held', 'simulate', now(), '{"problems":[]}', '{}' FROM generate_series(1, 20000) g;
           ANALYZE calls`,
        );
        try {
          return (await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values)).rows
            .map((row) => row['QUERY PLAN'])
            .join('\n');
        } finally {
          await admin.query('ROLLBACK');
        }
      };
      const newest = await plan({ hideTest: true, order: 'desc', limit: 50 });
      expect(newest).toMatch(/Index Scan Backward using calls_live on calls/);
      expect(newest).not.toMatch(/Sort|Filter: .*source/);
      expect(await plan({ hideTest: true, order: 'desc', limit: 50, after: '~' })).toMatch(
        /Index Scan Backward using calls_live on calls/,
      );
      const queue = await plan({ review: true, limit: 50 });
      expect(queue).toMatch(/Index Scan using calls_live on calls/);
      expect(queue).not.toMatch(/Sort/);
    });

    it("reads /metrics' figures from the kept counts and one index row a sink, never reading every delivery (docs/reference.md#metrics)", async () => {
      await (await openPostgresStore({ url: url!, schema, poolSize: 1 })).close(); // migrated, whether or not the contracts ran first
      // As above: whether the indexes can serve it, the table being too small for the planner to prefer them.
      await admin.query(
        `BEGIN; SET LOCAL search_path = "${schema}"; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off`,
      );
      try {
        const plan = (await admin.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${DELIVERY_STATS_SQL}`)).rows.map((row) =>
          row['QUERY PLAN'].trim(),
        );
        const reads = plan.filter((line) => / on deliveries\b/.test(line));
        expect(reads, plan.join('\n')).toEqual([
          expect.stringMatching(/^-> {2}Index Scan using deliveries_state_sink on deliveries d /),
        ]);
        expect(plan[plan.indexOf(reads[0]!) - 1], plan.join('\n')).toMatch(/^-> {2}Limit /);
      } finally {
        await admin.query('ROLLBACK');
      }
    });

    it('counts the deliveries of a schema made before migration 5, and follows the writes of a replica of the version before', async () => {
      const old = freshSchema();
      dropped.push(old);
      await admin.query(`CREATE SCHEMA "${old}"; SET search_path = "${old}"`);
      try {
        for (const migration of POSTGRES_MIGRATIONS.slice(0, 4)) await admin.query(migration);
        await admin.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO schema_migrations (version) VALUES (1), (2), (3), (4)`);
        const states = ['done', 'done', 'dead', 'pending', 'in_flight', 'pending'];
        for (const [i, state] of states.entries()) {
          await admin.query(
            `INSERT INTO calls (${OLD_INSERT_COLUMNS}) VALUES ($1, 'h', $2, 'accepted', 'webhook', now(), '{}', '{}')`,
            [`c${i}`, `call_id:${i}`],
          );
          await admin.query(
            `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES ($1, 'log', $2, 5, $3, $3), ($1, 'crm', $4, 5, $3, $3)`,
            [`c${i}`, state, 1000 + i, i < 3 ? 'pending' : 'done'],
          );
        }
      } finally {
        await admin.query('RESET search_path');
      }
      const store = await openPostgresStore({ url: url!, schema: old, poolSize: 1 });
      const stats = async () => (await store.deliveryStats()).map(({ sink, state, count }) => ({ sink, state, count }));
      const counted = async () =>
        (
          await admin.query(
            `SELECT sink, state, count(*)::int AS count FROM "${old}".deliveries GROUP BY sink, state ORDER BY sink COLLATE "C", state`,
          )
        ).rows;
      try {
        expect(await stats()).toEqual([
          { sink: 'crm', state: 'done', count: 3 },
          { sink: 'crm', state: 'pending', count: 3 },
          { sink: 'log', state: 'dead', count: 1 },
          { sink: 'log', state: 'done', count: 2 },
          { sink: 'log', state: 'in_flight', count: 1 },
          { sink: 'log', state: 'pending', count: 2 },
        ]);
        expect(
          (await store.deliveryStats()).filter((s) => s.state === 'pending').map((s) => [s.sink, s.oldestCreatedAt]),
        ).toEqual([
          ['crm', 1000],
          ['log', 1003],
        ]);
        // A replica of the version before, still serving during a rolling upgrade, knows nothing of the counts.
        await admin.query(`UPDATE "${old}".deliveries SET state = 'done' WHERE sink = 'log' AND state = 'in_flight'`);
        await admin.query(
          `INSERT INTO "${old}".calls (${OLD_INSERT_COLUMNS}) VALUES ('c9', 'h', 'call_id:9', 'accepted', 'webhook', now(), '{}', '{}')`,
        );
        await admin.query(
          `INSERT INTO "${old}".deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES ('c9', 'log', 'pending', 5, 9, 9)`,
        );
        await admin.query(`DELETE FROM "${old}".calls WHERE id = 'c0'`);
        expect(await stats()).toEqual(await counted());
      } finally {
        await store.close();
      }
    });

    it('keeps its tables in the given schema only', async () => {
      const { rows } = await admin.query(
        `SELECT table_schema FROM information_schema.tables WHERE table_name = 'deliveries' AND table_schema = $1`,
        [schema],
      );
      expect(rows).toHaveLength(1);
    });

    it('refuses a schema name it could not quote safely', async () => {
      await expect(openPostgresStore({ url: url!, schema: 'Robert"; DROP' })).rejects.toThrow(/"schema"/);
    });

    it('fails to open, rather than hangs, when the server is unreachable', async () => {
      const unreachable = new URL(url!);
      unreachable.port = '1';
      await expect(openPostgresStore({ url: unreachable.href, connectTimeoutMs: 2000 })).rejects.toThrow();
    });

    it('rejects every call after close, and closes twice without error', async () => {
      const store = await openPostgresStore({ url: url!, schema, poolSize: 1 });
      await store.close();
      await store.close();
      await expect(store.commitCall(commitInput('end-of-call', 'call_id:closed', []))).rejects.toThrow();
    });
  });
});
