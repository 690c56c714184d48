import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { bodyFactory } from './bodies.js';
import { API_KEY, removeDir, type Server, startCallhook, tempDir } from './processes.js';

/**
 * A storm (issue 24): a campaign ends and its calls' webhooks all arrive at once. Every request is sent in the same
 * turn of the bench's loop, each on a fresh connection as the sender opens one per call, spread round-robin over
 * the replicas; each reply is timed, and then the store is counted: one record per call_id, no more, no fewer.
 */

export const STORM_CALLS = 5_000;
/** The sender gives up after 10 s and never retries (spec section 6.1). */
export const SENDER_DEADLINE_MS = 10_000;
/** Requests to each replica before the storm, one at a time, not counted: the route's code warmed, as in production. */
export const WARMUP_PER_REPLICA = 20;
const JSONL_ONLY = [{ name: 'jsonl', type: 'jsonl' }];

export interface StormStore {
  kind: 'sqlite' | 'postgres';
  replicas: number;
}

export interface StormRun {
  /** Milliseconds from each request's send to the end of its reply; Infinity for one never answered. */
  latencies: number[];
  /** Replies by status code, `timeout` (no reply within the sender's 10 s) or the socket error's code. */
  statuses: Map<string, number>;
  /** How long the bench took to send them all: each latency starts when its own request was sent. */
  sendMs: number;
  /** Rows the store holds under the storm's call_ids, and how many distinct call_ids they carry. */
  records: number;
  distinct: number;
}

/** One storm against fresh replicas and a fresh store; `postgres` is the server a new database is made on. */
export async function measureStorm({ kind, replicas }: StormStore, postgres: string): Promise<StormRun> {
  const dirs = Array.from({ length: replicas }, () => tempDir());
  const database = kind === 'postgres' ? await createDatabase(postgres) : undefined;
  const servers: Server[] = [];
  try {
    const env: Record<string, string> = database ? { DATABASE_URL: database.url } : {};
    // One after the other: the first migrates the new database, the others find it done.
    for (const dataDir of dirs) servers.push(await startCallhook({ dataDir, sinks: JSONL_ONLY, env }));
    const warmup = bodyFactory('json');
    for (const server of servers) {
      for (let i = 0; i < WARMUP_PER_REPLICA; i++) await send(server.url, warmup.next());
    }
    const storm = bodyFactory('json');
    const bodies = Array.from({ length: STORM_CALLS }, () => storm.next());
    const keys = bodies.map((body) => `call_id:${(JSON.parse(body) as { call_id: string }).call_id}`);
    const sent = performance.now();
    const replies = bodies.map((body, i) => send(servers[i % servers.length]!.url, body));
    const sendMs = performance.now() - sent;
    const outcomes = await Promise.all(replies);
    // Stopped before counting: a call refused with 503 may still commit, and the count must see it if it did.
    await Promise.all(servers.map((s) => s.stop()));
    const counted = database
      ? await countPostgres(database.url, keys)
      : countSqlite(join(dirs[0]!, 'callhook.db'), keys);
    const statuses = new Map<string, number>();
    for (const { status } of outcomes) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    return { latencies: outcomes.map((o) => o.ms ?? Number.POSITIVE_INFINITY), statuses, sendMs, ...counted };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database?.drop();
    dirs.forEach(removeDir);
  }
}

interface Outcome {
  status: string;
  ms?: number;
}

/** One call as the sender posts it: a connection of its own (no agent), closed after the reply. */
function send(url: string, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(`${url}/webhooks/end-of-call`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        authorization: `Bearer ${API_KEY}`,
      },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status: 'timeout' });
    }, SENDER_DEADLINE_MS);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: String(res.statusCode), ms: performance.now() - started });
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ status: err.code ?? 'error' });
    });
    req.end(body);
  });
}

/** A database of its own for the replicas, made before and dropped after, as sink-targets.ts does for the sink. */
async function createDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `callhook_bench_storm_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function countPostgres(url: string, keys: readonly string[]): Promise<{ records: number; distinct: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ records: number; distinct: number }>(
      `SELECT count(*)::int AS records, count(DISTINCT dedup_key)::int AS "distinct" FROM calls WHERE dedup_key = ANY($1::text[])`,
      [keys],
    );
    return rows[0]!;
  } finally {
    await client.end();
  }
}

function countSqlite(path: string, keys: readonly string[]): { records: number; distinct: number } {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT count(*) AS records, count(DISTINCT dedup_key) AS "distinct" FROM calls WHERE dedup_key IN (SELECT value FROM json_each(?))`,
      )
      .get(JSON.stringify(keys)) as { records: number; distinct: number };
  } finally {
    db.close();
  }
}
