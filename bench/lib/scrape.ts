import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { createMetrics } from '../../src/metrics.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/store.js';
import { removeDir, tempDir } from './processes.js';
import { median } from './table.js';

/**
 * The cost of a `/metrics` scrape against the number of deliveries stored (docs/reference.md#metrics: it must not
 * grow). Each size gets a store of its own, filled with SQL straight into its tables (a million deliveries through the
 * intake would take minutes), then the stores are scraped in turn in this process: `createMetrics(...).render()`, the
 * work behind the route, without the HTTP round trip, which is the same at any size. For scale, the full count a scrape
 * made before migration 5 is timed on the largest store too.
 */

export interface ScrapeSize {
  deliveries: number;
  /** Milliseconds per scrape, every measured one. */
  times: number[];
}
export interface ScrapeResult {
  store: 'sqlite' | 'postgres';
  sizes: ScrapeSize[];
  /** Milliseconds of the GROUP BY a scrape ran before migration 5, on the largest store (median of a few). */
  fullCountMs: number;
  /** Seconds spent writing the largest store's rows. */
  fillSeconds: number;
}

const SINKS = ['crm', 'jsonl'];
const WARMUP = 20;
const SCRAPES = 200;
/** The query each scrape ran before migration 5, kept here only to show what was saved. */
const FULL_COUNT = `SELECT state, sink, COUNT(*) AS count FROM deliveries GROUP BY state, sink`;

/**
 * One call per two deliveries (one per sink); most delivered, some dead, a few pending, as a store with history
 * looks. Pending ones have distinct creation times, so the oldest-pending lookup has a real first row to find.
 */
const stateOf = (n: string) => `CASE WHEN ${n} % 100 = 0 THEN 'pending' WHEN ${n} % 50 = 1 THEN 'dead' ELSE 'done' END`;

/**
 * The stores take turns, one scrape each, so a machine that drifts (a noisy neighbour, a JIT warming up) affects every
 * size alike.
 */
async function scrapesInTurn(stores: readonly Store[]): Promise<number[][]> {
  const metrics = stores.map((store) => createMetrics(store, SINKS));
  const times = stores.map(() => [] as number[]);
  for (let i = 0; i < WARMUP + SCRAPES; i++) {
    for (const [n, m] of metrics.entries()) {
      const started = performance.now();
      await m.render();
      if (i >= WARMUP) times[n]!.push(performance.now() - started);
    }
  }
  return times;
}

function fillSqlite(file: string, deliveries: number): void {
  const db = new Database(file);
  try {
    db.pragma('synchronous = OFF');
    db.transaction(() => {
      db.prepare(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
        INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw)
        SELECT printf('c%09d', i), 'h', 'call_id:' || i, 'accepted', 'webhook', '2026-01-01T00:00:00.000Z', '{}', '{}' FROM n`).run(
        deliveries / SINKS.length,
      );
      db.prepare(`INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
        SELECT c.id, s.value, ${stateOf('c.rowid')}, 0, c.rowid, c.rowid FROM calls c, json_each(?) s`).run(
        JSON.stringify(SINKS),
      );
    })();
  } finally {
    db.close();
  }
}

export async function measureScrapeSqlite(sizes: readonly number[]): Promise<ScrapeResult> {
  const dir = tempDir();
  const result: ScrapeResult = { store: 'sqlite', sizes: [], fullCountMs: Number.NaN, fillSeconds: Number.NaN };
  const stores: Store[] = [];
  try {
    for (const deliveries of sizes) {
      const file = join(dir, `${deliveries}.db`);
      await openSqliteStore({ path: file }).close(); // migrated
      const started = performance.now();
      fillSqlite(file, deliveries);
      result.fillSeconds = (performance.now() - started) / 1000;
      const db = new Database(file, { readonly: true });
      try {
        const count = db.prepare(FULL_COUNT);
        result.fullCountMs = median(Array.from({ length: 5 }, () => timed(() => count.all())));
      } finally {
        db.close();
      }
      stores.push(openSqliteStore({ path: file }));
    }
    const times = await scrapesInTurn(stores);
    result.sizes = sizes.map((deliveries, n) => ({ deliveries, times: times[n]! }));
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    removeDir(dir);
  }
  return result;
}

export async function measureScrapePostgres(url: string, sizes: readonly number[]): Promise<ScrapeResult> {
  const result: ScrapeResult = { store: 'postgres', sizes: [], fullCountMs: Number.NaN, fillSeconds: Number.NaN };
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const schemas: string[] = [];
  const stores: Store[] = [];
  try {
    for (const deliveries of sizes) {
      const schema = `callhook_bench_${process.pid}_${deliveries}`;
      schemas.push(schema);
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await (await openPostgresStore({ url, schema, poolSize: 1 })).close(); // migrated
      const started = performance.now();
      await admin.query(`SET search_path = ${schema}`);
      await admin.query(
        `INSERT INTO calls (id, hook, dedup_key, status, source, received_at, record, raw)
        SELECT 'c' || lpad(i::text, 9, '0'), 'h', 'call_id:' || i, 'accepted', 'webhook', '2026-01-01T00:00:00Z', '{}', '{}'
        FROM generate_series(1, $1::int) i`,
        [deliveries / SINKS.length],
      );
      await admin.query(
        `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
        SELECT c.id, s, ${stateOf('substr(c.id, 2)::int')}, 0, 0, substr(c.id, 2)::bigint FROM calls c, unnest($1::text[]) s`,
        [SINKS],
      );
      // As autovacuum would soon after a load this size: the planner's figures and the visibility map.
      await admin.query('VACUUM ANALYZE deliveries');
      result.fillSeconds = (performance.now() - started) / 1000;
      const counts: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        await admin.query(FULL_COUNT);
        counts.push(performance.now() - t);
      }
      result.fullCountMs = median(counts);
      await admin.query('RESET search_path');
      stores.push(await openPostgresStore({ url, schema, poolSize: 2 }));
    }
    const times = await scrapesInTurn(stores);
    result.sizes = sizes.map((deliveries, n) => ({ deliveries, times: times[n]! }));
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
    await admin.end();
  }
  return result;
}

function timed(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}
