import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { bodyFactory } from './bodies.js';
import { API_KEY, removeDir, type Server, startCallhook, tempDir } from './processes.js';

/**
 * A storm (issues 24 and 35): a campaign ends and its calls' webhooks all arrive at once. Every request is sent in the
 * same turn of the bench's loop, each on a fresh connection as the sender opens one per call, spread round-robin over
 * the replicas; each reply is timed, and then the store is counted: one record per call_id, no more, no fewer, and
 * every copy of a call sent more than once counted on its record as a duplicate.
 */

/**
 * A storm's shape: `calls` distinct calls, each sent `copies` times (the copies of one call go to different replicas),
 * after `warmup` requests to each process.
 */
export interface StormShape {
  calls: number;
  copies: number;
  warmup: number;
}

/**
 * Requests to each process before the storm, not counted: a serve that has taken this many calls spends what a
 * running one does. A freshly started process spends about twice as much a request on a storm, and a warmed one
 * restarted on the same data as much again (docs/performance.md): it is V8 compiling the request's path, not the store.
 */
export const WARMED = 3_000;
/** A process just started: a few requests, one at a time, so the route has run once before the storm. */
export const FRESH = 20;
/** The warm-up's requests in flight at once, so 3,000 take a second or two, not ten. */
const WARMUP_IN_FLIGHT = 8;

export const STORM_CALLS = 5_000;
/** The campaign's end: every call once, at processes that have been serving a while. */
export const STORM: StormShape = { calls: STORM_CALLS, copies: 1, warmup: WARMED };
/** A sender that posts each call several times at once (a retrying proxy, two senders wired to one hook). */
export const DUPLICATE_STORM: StormShape = { calls: 300, copies: 5, warmup: WARMED };
/** The campaign's end right after a start or a deploy: the slowest a storm gets. */
export const FRESH_STORM: StormShape = { calls: STORM_CALLS, copies: 1, warmup: FRESH };
/** The sender gives up after 10 s and never retries (spec section 6.1). */
export const SENDER_DEADLINE_MS = 10_000;
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
  /** Rows the store holds under the storm's call_ids, how many distinct call_ids they carry, their duplicates. */
  records: number;
  distinct: number;
  duplicates: number;
  /**
   * CPU µs per request over the storm, from its first send to its last reply: each replica (event loop and threads),
   * the PostgreSQL backends of the storm's own database (undefined on SQLite), and the
   * bench's own process, the load generator.
   */
  cpu: { replicas: number[]; postgres?: number; load: number };
}

/** One storm against fresh replicas and a fresh store; `postgres` is the server a new database is made on. */
export async function measureStorm(
  { kind, replicas }: StormStore,
  shape: StormShape,
  postgres: string,
  extraEnv: Record<string, string> = {},
): Promise<StormRun> {
  const dirs = Array.from({ length: replicas }, () => tempDir());
  const database = kind === 'postgres' ? await createDatabase(postgres) : undefined;
  const servers: Server[] = [];
  try {
    const env: Record<string, string> = { ...extraEnv, ...(database ? { DATABASE_URL: database.url } : {}) };
    // One after the other: the first migrates the new database, the others find it done.
    for (const dataDir of dirs) servers.push(await startCallhook({ dataDir, sinks: JSONL_ONLY, env }));
    const warmup = bodyFactory('json');
    for (const server of servers) {
      let left = shape.warmup;
      const sender = async () => {
        while (left-- > 0) await send(server.url, warmup.next());
      };
      await Promise.all(Array.from({ length: shape.warmup > FRESH ? WARMUP_IN_FLIGHT : 1 }, sender));
    }
    // The warm-up's deliveries are made before the storm, not during it.
    await outboxEmpty(servers[0]!);
    const storm = bodyFactory('json');
    const bodies = Array.from({ length: shape.calls }, () => storm.next());
    const keys = bodies.map((body) => `call_id:${(JSON.parse(body) as { call_id: string }).call_id}`);
    // Copy after copy of the whole campaign; each copy of a call goes to the next replica after its previous copy's.
    const requests = Array.from({ length: shape.copies }, (_, copy) =>
      bodies.map((body, i) => ({ body, server: servers[(i + copy) % servers.length]! })),
    ).flat();
    const cpuBefore = await cpuNow(servers, database?.url);
    const sent = performance.now();
    const replies = requests.map(({ body, server }) => send(server.url, body));
    const sendMs = performance.now() - sent;
    const outcomes = await Promise.all(replies);
    const cpuAfter = await cpuNow(servers, database?.url);
    // Stopped before counting: a call refused with 503 may still commit, and the count must see it if it did.
    await Promise.all(servers.map((s) => s.stop()));
    const counted = database
      ? await countPostgres(database.url, keys)
      : countSqlite(join(dirs[0]!, 'callhook.db'), keys);
    const statuses = new Map<string, number>();
    for (const { status } of outcomes) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const per = (us: number) => us / requests.length;
    const cpu = {
      replicas: cpuAfter.replicas.map((us, i) => per(us - cpuBefore.replicas[i]!)),
      postgres:
        cpuAfter.postgres &&
        per([...cpuAfter.postgres].reduce((n, [pid, us]) => n + us - (cpuBefore.postgres?.get(pid) ?? 0), 0)),
      load: per(cpuAfter.load - cpuBefore.load),
    };
    return { latencies: outcomes.map((o) => o.ms ?? Number.POSITIVE_INFINITY), statuses, sendMs, ...counted, cpu };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database?.drop();
    dirs.forEach(removeDir);
  }
}

/** Polls /metrics until the store's outbox is empty (a shared store: one replica tells), for at most 30 s. */
async function outboxEmpty(server: Server): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const depth = /^callhook_outbox_depth (\S+)$/m.exec(text)?.[1];
    if (depth === undefined) throw new Error(`${server.name}: /metrics has no callhook_outbox_depth`);
    if (Number(depth) === 0) return;
    await sleep(100);
  }
  throw new Error(`${server.name}: the warm-up's deliveries were not made within 30 s`);
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

type Counted = Pick<StormRun, 'records' | 'distinct' | 'duplicates'>;

async function countPostgres(url: string, keys: readonly string[]): Promise<Counted> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Counted>(
      `SELECT count(*)::int AS records, count(DISTINCT dedup_key)::int AS "distinct", coalesce(sum(duplicates), 0)::int AS duplicates
       FROM calls WHERE dedup_key = ANY($1::text[])`,
      [keys],
    );
    return rows[0]!;
  } finally {
    await client.end();
  }
}

function countSqlite(path: string, keys: readonly string[]): Counted {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT count(*) AS records, count(DISTINCT dedup_key) AS "distinct", coalesce(sum(duplicates), 0) AS duplicates
         FROM calls WHERE dedup_key IN (SELECT value FROM json_each(?))`,
      )
      .get(JSON.stringify(keys)) as Counted;
  } finally {
    db.close();
  }
}

/** µs of CPU so far: each replica's process, each PostgreSQL backend of the storm's database, this process. */
async function cpuNow(servers: readonly Server[], database: string | undefined) {
  const load = process.cpuUsage();
  return {
    replicas: servers.map((s) => processTime(String(s.pid)) ?? 0),
    postgres: database === undefined ? undefined : await backendTimes(database),
    load: load.user + load.system,
  };
}

/** utime + stime of a whole process (fields 14 and 15 of stat(5), in USER_HZ ticks of 10 ms), in µs. */
function processTime(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined; // gone, or not Linux
  }
}

/**
 * The CPU of the server's backends connected to the storm's own database, by pid: only the replicas use it, so
 * other work on the same server is left out. A backend that ends during the storm takes its time with it (a floor).
 */
async function backendTimes(url: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return new Map(rows.map(({ pid }) => [pid, processTime(String(pid)) ?? 0]));
  } finally {
    await client.end();
  }
}
