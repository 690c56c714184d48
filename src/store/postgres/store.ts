import pg from 'pg';
import { recordContentHash } from '../../normalize/dedup-key.js';
import { type CallRecord, storedRecord } from '../../record.js';
import type { CommitInput, CommitResult, Receipt } from '../calls.js';
import type { ClaimedDelivery, DeliveryState } from '../outbox.js';
import { parseReconcileRun, RECONCILE_RUN_KEY, reconcileRunJson } from '../reconcile-run.js';
import type { Store } from '../store.js';
import { postgresAdmin } from './admin.js';
import { createCommitBatcher } from './batch.js';
import { inTransaction, pgText } from './client.js';
import { createFinishBatcher } from './finish.js';
import { postgresIncidents } from './incidents.js';
import { postgresKeptKeys } from './kept-keys.js';
import { postgresOperators } from './operators.js';
import { postgresPeriod } from './period.js';
import { postgresPrivacy } from './privacy.js';
import { postgresPurge } from './purge.js';
import { postgresRetention } from './retention.js';
import { migratePostgres, SCHEMA_NAME } from './schema.js';
import { heldSql, postgresSinkState } from './sink-state.js';

export interface PostgresStoreOptions {
  /** A `postgres://` connection string (docs/reference.md#start-and-set-up: `DATABASE_URL`). */
  url: string;
  /** Keep every table in this schema, created if missing; tests isolate themselves in a fresh one. */
  schema?: string;
  poolSize?: number;
  /**
   * How long a request waits for a connection, and a new connection for the server, before its commit fails (and
   * the reply is 503): serve gives it the config's `store_deadline`, inside the sender's 10 s.
   */
  connectTimeoutMs?: number;
  /**
   * How long any query may take before its connection is given up and closed. A server that vanished mid-query
   * (a failover that moved the database's address, a host that is gone) never answers, and TCP takes about 15
   * minutes to say so: meanwhile every pooled connection that touches it hangs, and with the pool full of them
   * the store stays down long after a new server answers at the same name.
   */
  queryTimeoutMs?: number;
}

const INT8 = 20;

/**
 * Epoch milliseconds, bigserial ids and counts are bigint, which pg hands back as strings to be safe beyond
 * 2^53; none of ours come near that. Set on this pool only, so a postgres sink sharing the process keeps pg's default.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary'
      ? Number
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export async function openPostgresStore({
  url,
  schema,
  poolSize = 10,
  connectTimeoutMs = 5000,
  queryTimeoutMs = 15_000,
}: PostgresStoreOptions): Promise<Store> {
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new Error(
      `postgres store: option "schema" must be a lower-case SQL identifier, got ${JSON.stringify(schema)}`,
    );
  }
  const connection = {
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    types,
    // Set at connection start-up so no statement can ever run before it, whichever client the pool hands out.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  };
  // Migrations may wait long, for another replica's migration or to index a big table: they run first, on a
  // connection of their own with no query time-out.
  await migrateOn(new pg.Client(connection), schema);
  const pool = new pg.Pool({ ...connection, max: poolSize, query_timeout: queryTimeoutMs });
  // An idle client whose server went away emits 'error' on the pool; unhandled, that would kill the process.
  // The next query fails on its own and its caller answers 503, so there is nothing more to do here.
  pool.on('error', () => undefined);
  let closing: Promise<void> | undefined;

  return {
    kind: 'postgres',
    // The calls of one turn share a statement; one that cannot simply insert is committed alone (postgres/batch.ts).
    commitCall: createCommitBatcher(pool, (input) => inTransaction(pool, (client) => commit(client, input))),
    recordRejection: async (receipt) => void (await pool.query(RECEIPT_INSERT, receiptParams(receipt, null))),
    claimDeliveries: (sink, limit, leaseMs, pausedByDefault = false) =>
      claim(pool, sink, limit, leaseMs, pausedByDefault),
    // The attempts that finish in one turn are recorded by one statement (postgres/finish.ts).
    finishAttempt: createFinishBatcher(pool),
    // PostgreSQL is shared by replicas: an in_flight row may belong to one that is alive, so leases are never
    // taken back at start-up; a dead replica's leases expire and claimDeliveries picks them up then.
    resumeInFlight: async () => ({ resumed: 0, besideAnother: false }),
    releaseLeases: async (ids) => {
      await pool.query(
        `UPDATE deliveries SET state = 'pending', lease_until = NULL, attempts = attempts - 1
         WHERE state = 'in_flight' AND id = ANY($1::bigint[])`,
        [ids],
      );
    },
    // A paused sink has nothing due; one waiting out a 429 nothing before the wait ends
    // (docs/reference.md#what-every-sink-shares).
    nextDueIn: async (sink, pausedByDefault = false) => {
      const { rows } = await pool.query<{ at: number | null; paused: boolean | null; until: number | null }>(
        `SELECT (SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at ELSE lease_until END)
           FROM deliveries WHERE sink = $1 AND state IN ('pending', 'in_flight')) AS at,
           (SELECT paused FROM sink_state WHERE sink = $1) AS paused,
           (SELECT paused_until FROM sink_state WHERE sink = $1) AS until`,
        [sink],
      );
      const { at, paused, until } = rows[0]!;
      if ((paused ?? pausedByDefault) || at == null) return undefined;
      const now = Date.now();
      return Math.max(0, at - now, (until ?? 0) - now);
    },
    ...postgresSinkState(pool),
    recordReconcileRun: async (run) => {
      await pool.query(
        `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [RECONCILE_RUN_KEY, pgText(reconcileRunJson(run))],
      );
    },
    lastReconcileRun: async () => {
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [
        RECONCILE_RUN_KEY,
      ]);
      return parseReconcileRun(rows[0]?.value);
    },
    countDeliveries: () => countDeliveries(pool),
    ...postgresAdmin(pool),
    ...postgresPeriod(pool),
    ...postgresPurge(pool),
    ...postgresRetention(pool),
    ...postgresIncidents(pool),
    ...postgresPrivacy(pool),
    ...postgresOperators(pool),
    // A write, not a SELECT 1: a server that answers but cannot commit (disk full, read-only standby) is not ready.
    ping: async () => {
      await pool.query(
        `INSERT INTO meta (key, value) VALUES ('heartbeat', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [new Date().toISOString()],
      );
    },
    // pg refuses a second end(); shutdown paths may close twice.
    close: () => (closing ??= pool.end()),
    keptKeys: postgresKeptKeys(pool),
  };
}

/**
 * A call alone, in a transaction of its own: what postgres/batch.ts leaves to it (a repeat of a stored key, an ingest,
 * each call of a batch PostgreSQL refused). docs/reference.md#deduplication. ON CONFLICT waits for a concurrent
 * inserter of the same (hook, dedup_key) to finish; if it committed, the SELECT (a fresh snapshot under READ COMMITTED)
 * finds its row. Only if that row vanished between the two statements (a purge) is the insert tried again. A repeat of
 * the stored call's content is a duplicate, counted on it, its receipt keeping its body; other content is a conflict,
 * which `on_conflict: duplicate` makes a duplicate too, or which is left to the intake to store under its content's key
 * (nothing written here).
 */
async function commit(
  client: pg.PoolClient,
  { record, contentHash, onConflict, status, raw, sinks, receipt, ingests }: CommitInput,
): Promise<CommitResult> {
  /**
   * An ingested refused request keeps its own receipt, marked with the call it became, instead of a new one. A receipt
   * says where its request came from as the call does: a repeat's, the repeat's own source.
   */
  const receiptFor = async (row: Receipt, callId: string) => {
    if (ingests === undefined)
      return void (await client.query(RECEIPT_INSERT, receiptParams({ ...row, source: record.source }, callId)));
    const marked = await client.query(
      `UPDATE receipts SET call_id = $2, ingested_as = $2 WHERE id = $1 AND outcome = 'rejected' AND ingested_as IS NULL`,
      [ingests, callId],
    );
    if (marked.rowCount === 0) throw new Error(`receipt ${ingests} is not a refused request waiting to be ingested`);
  };
  for (let tries = 0; tries < 3; tries++) {
    const inserted = await client.query(
      `INSERT INTO calls (id, hook, dedup_key, content_hash, status, source, received_at, record, raw)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (hook, dedup_key) DO NOTHING RETURNING id`,
      [
        record.id,
        record.hook,
        record.dedup_key,
        contentHash,
        status,
        record.source,
        record.received_at,
        JSON.stringify(record),
        JSON.stringify(raw),
      ],
    );
    if (inserted.rowCount === 1) {
      const now = Date.now();
      if (sinks.length > 0) {
        await client.query(
          `INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
           SELECT $1, sink, 'pending', $2, $2, $2 FROM unnest($3::text[]) AS sink`,
          [record.id, now, sinks],
        );
      }
      // The call's raw request holds the body and query: its receipt need not hold them again.
      const { rawBody: _body, query: _query, ...bare } = receipt;
      await receiptFor({ ...bare, status: 200, outcome: status }, record.id);
      return { outcome: status, id: record.id };
    }
    // The stored call, locked until this commit: its record only when its hash has no column value yet (a call
    // stored before migration 4, or by a replica of the version before), to hash it once and keep the hash.
    const first = await client.query<{ id: string; content_hash: string | null; record: unknown }>(
      `SELECT id, content_hash, CASE WHEN content_hash IS NULL THEN record END AS record
       FROM calls WHERE hook = $1 AND dedup_key = $2 FOR UPDATE`,
      [record.hook, record.dedup_key],
    );
    const row = first.rows[0];
    if (row === undefined) continue;
    let stored = row.content_hash;
    if (stored === null) {
      stored = recordContentHash(row.record);
      await client.query('UPDATE calls SET content_hash = $2 WHERE id = $1 AND content_hash IS NULL', [row.id, stored]);
    }
    // Counted only when it is a duplicate: a conflict kept as a call of its own is not one.
    if (stored !== contentHash && onConflict === 'keep') return { outcome: 'conflict', id: row.id };
    await client.query('UPDATE calls SET duplicates = duplicates + 1 WHERE id = $1', [row.id]);
    await receiptFor({ ...receipt, status: 200, outcome: 'duplicate' }, row.id);
    return { outcome: 'duplicate', id: row.id };
  }
  throw new Error(`postgres store: the call ${record.hook} ${record.dedup_key} neither inserts nor exists`);
}

const RECEIPT_INSERT = `
  INSERT INTO receipts (hook, received_at, method, content_type, size, status, outcome, call_id, error, raw_body, query, source)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;

function receiptParams(r: Receipt, callId: string | null): unknown[] {
  const rawBody = r.rawBody ? Buffer.from(r.rawBody.buffer, r.rawBody.byteOffset, r.rawBody.byteLength) : null;
  return [
    r.hook,
    r.receivedAt,
    r.method,
    r.contentType,
    r.size,
    r.status,
    r.outcome,
    callId,
    pgText(r.error),
    rawBody,
    pgText(r.query),
    r.source ?? null,
  ];
}

/**
 * SKIP LOCKED lets replicas claim side by side without waiting on each other. A row another replica claimed and
 * committed after this statement's snapshot is re-checked against the WHERE clause before it is locked, finds
 * itself in_flight under a live lease, and is left out: one delivery is never leased twice.
 */
async function claim(
  pool: pg.Pool,
  sink: string,
  limit: number,
  leaseMs: number,
  pausedByDefault: boolean,
): Promise<ClaimedDelivery[]> {
  const now = Date.now();
  const { rows } = await pool.query<{ id: number; sink: string; attempts: number; record: CallRecord }>(
    // One index walk per state, as in SQLite: an OR across states would also visit every delivered row of the sink. A
    // held sink (docs/reference.md#what-every-sink-shares: paused, or waiting out a 429) claims nothing, in this same
    // statement.
    `WITH hold AS (SELECT ${heldSql('$1', '$2', '$5::boolean')} AS held),
     expired AS (
       SELECT id FROM deliveries WHERE sink = $1 AND state = 'in_flight' AND lease_until <= $2 AND NOT (SELECT held FROM hold)
       LIMIT $4 FOR UPDATE SKIP LOCKED),
     pending AS (
       SELECT id FROM deliveries WHERE sink = $1 AND state = 'pending' AND next_attempt_at <= $2 AND NOT (SELECT held FROM hold)
       ORDER BY next_attempt_at, id LIMIT $4 FOR UPDATE SKIP LOCKED),
     due AS (SELECT id FROM expired UNION ALL SELECT id FROM pending LIMIT $4),
     claimed AS (
       UPDATE deliveries d SET state = 'in_flight', lease_until = $3, attempts = d.attempts + 1, updated_at = $2
       FROM due WHERE d.id = due.id
       RETURNING d.id, d.sink, d.attempts, d.call_id)
     SELECT claimed.id, claimed.sink, claimed.attempts, c.record
     FROM claimed JOIN calls c ON c.id = claimed.call_id ORDER BY claimed.id`,
    [sink, now, now + leaseMs, limit, pausedByDefault],
  );
  return rows.map((r) => ({ id: r.id, sink: r.sink, attempt: r.attempts, record: storedRecord(r.record) }));
}

async function countDeliveries(pool: pg.Pool): Promise<Record<DeliveryState, number>> {
  const counts: Record<DeliveryState, number> = { pending: 0, in_flight: 0, done: 0, dead: 0 };
  const { rows } = await pool.query<{ state: DeliveryState; n: number }>(
    'SELECT state, count(*) AS n FROM deliveries GROUP BY state',
  );
  for (const row of rows) counts[row.state] = row.n;
  return counts;
}

async function migrateOn(client: pg.Client, schema: string | undefined): Promise<void> {
  // A server that goes away mid-migration fails the migration, not the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await migratePostgres(client, schema);
  } finally {
    await client.end().catch(() => undefined);
  }
}
