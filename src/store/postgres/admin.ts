import type pg from 'pg';
import { recordContentHash } from '../../normalize/dedup-key.js';
import { type CallRecord, type RawRequest, storedRecord } from '../../record.js';
import type {
  AttemptInfo,
  CallEdit,
  DeliveryInfo,
  DeliveryStat,
  ListCallsQuery,
  ListDeliveriesQuery,
  ListReceiptsQuery,
  PageOrder,
  ReceiptInfo,
  StoredCall,
} from '../admin-queries.js';
import { NO_PLATFORM, NOT_TEST, pageLimit, retryState, timeBound, uniqueSinks } from '../admin-query.js';
import type { AdminReadsAndEdits } from '../store.js';
import { inTransaction, pgText } from './client.js';

/** The PostgreSQL store's reads and admin writes (docs/reference.md#operating): what /admin and the CLI ask of it. */

export type PostgresAdmin = AdminReadsAndEdits;

interface CallRow {
  record: CallRecord;
  status: StoredCall['status'];
  raw: RawRequest;
  duplicates: number;
}

/**
 * A field of `data` as text. Every json operator refuses a record holding `\u0000` anywhere (it cannot become
 * text), and a sender can put one in any string: read as U+FFFD instead, one such record cannot make the filter
 * fail for all. A `\u0000` that is really an escaped backslash and `u0000` stays valid JSON after the swap.
 */
export const dataField = (name: string) =>
  `(replace(record::text, '\\u0000', '\\ufffd')::json -> 'data' ->> '${name}')`;
/**
 * A caller's history (an in-call hook's answer). Both walk the calls_phone index, whose expression this is; with
 * `id` its second column, ORDER BY id DESC LIMIT is an index scan backward that stops at the limit.
 * No status filter: every stored call is accepted or held, and both count as the caller's calls.
 */
export const CALLER_HISTORY_SQL = {
  count: `SELECT count(*) AS count FROM calls WHERE ${dataField('phone_number')} = $1`,
  calls: `SELECT record FROM calls WHERE ${dataField('phone_number')} = $1 ORDER BY id DESC LIMIT $2`,
};
/**
 * Deliveries by sink and state, for /metrics (docs/reference.md#metrics: a scrape's cost does not grow with the store).
 * The counts are the shards the triggers of migration 5 keep, added up; the oldest pending delivery of a sink is
 * its first by id in the (state, sink, id) index, one row read (bigserial ids grow in the order deliveries are
 * made, as does the created_at they are made with).
 */
export const DELIVERY_STATS_SQL = `
  SELECT c.sink, c.state, c.count, CASE WHEN c.state = 'pending' THEN (
    SELECT d.created_at FROM deliveries d WHERE d.state = 'pending' AND d.sink = c.sink ORDER BY d.id LIMIT 1
  ) END AS "oldestCreatedAt"
  FROM (SELECT sink, state, sum(count)::bigint AS count FROM delivery_counts GROUP BY sink, state) c
  WHERE c.count > 0
  ORDER BY c.sink COLLATE "C", c.state`;
/** The record as json any operator can read (dataField: a `\u0000` read as U+FFFD). */
const readable = `replace(calls.record::text, '\\u0000', '\\ufffd')::json`;
/** The record's revision: 1 for one stored before records carried it (record.ts storedRecord). */
const REVISION = `coalesce((${readable} ->> 'revision')::integer, 1)`;
/**
 * docs/reference.md#editing-a-call: held, or with problems and no review mark at the current revision. A record that is
 * not callhook's (a row edited by hand) may hold no array of problems: json_array_length would fail on it.
 */
const IN_REVIEW = `(status = 'held' OR (CASE WHEN json_typeof(${readable} -> 'problems') = 'array' THEN json_array_length(${readable} -> 'problems') END > 0
  AND NOT EXISTS (SELECT 1 FROM call_edits e WHERE e.call_id = calls.id AND e.reviewed AND e.revision = ${REVISION})))`;

/** A receipt of a request that was not test traffic: NULL is one written before receipts kept their source. */
const RECEIPT_NOT_TEST = `(receipts.source IS NULL OR receipts.${NOT_TEST})`;

/** JavaScript's trim(), as the SQLite store and the delivery filters apply it. */
const trimmed = (sql: string) => `regexp_replace(${sql}, '^\\s+|\\s+$', '', 'g')`;

/**
 * Each filter is a fixed fragment around its placeholder; a query joins the fragments of the filters it has, so
 * the indexes on status, received_at and (state, sink, id) serve it. Values only ever travel as parameters.
 */
const CALL_FILTERS: Record<keyof Omit<ListCallsQuery, 'limit' | 'order'>, (p: string) => string> = {
  hook: (p) => `hook = ${p}`,
  status: (p) => `status = ${p}`,
  source: (p) => `source = ANY(${p}::text[])`,
  platform: (p) => `coalesce(${readable} ->> 'platform', '${NO_PLATFORM}') = ${p}`,
  outcome: (p) => `lower(${trimmed(dataField('call_outcome'))}) = lower(${trimmed(p)})`,
  sentiment: (p) => `lower(${dataField('sentiment_analysis')}) = lower(${p})`,
  phone: (p) => `${dataField('phone_number')} = ${p}`,
  recordingUrl: (p) => `${dataField('recording_url')} = ${p}`,
  from: (p) => `received_at >= ${p}::timestamptz`,
  to: (p) => `received_at < ${p}::timestamptz`,
  // The json type keeps the text as written, which is the record's JSON as the SQLite store holds it.
  text: (p) => `strpos(lower(record::text), lower(${p})) > 0`,
  // The literal term lets the planner prove the calls_live index's predicate (docs/reference.md#test-traffic).
  hideTest: (p) => `(${p}::boolean AND ${NOT_TEST})`,
  // docs/reference.md#test-traffic: test traffic is never in the queue.
  review: (p) => `(${p}::boolean AND ${IN_REVIEW} AND ${NOT_TEST})`,
  after: (p) => `id > ${p}`,
};

const RECEIPT_FILTERS: Record<keyof Omit<ListReceiptsQuery, 'limit' | 'order'>, (p: string) => string> = {
  outcome: (p) => `outcome = ${p}`,
  hook: (p) => `hook = ${p}`,
  from: (p) => `received_at >= ${p}::timestamptz`,
  to: (p) => `received_at < ${p}::timestamptz`,
  hideTest: (p) => `(${p}::boolean AND ${RECEIPT_NOT_TEST})`,
  after: (p) => `id > ${p}::bigint`,
};

const RECEIPT_COLUMNS = `SELECT id, hook, call_id AS "callId", received_at AS "receivedAt", method, content_type AS "contentType", size,
  status, outcome, error, raw_body AS "rawBody", query, ingested_as AS "ingestedAs" FROM receipts`;

const storedCall = (row: CallRow): CallRow => ({ ...row, record: storedRecord(row.record) });

type ReceiptRow = Omit<ReceiptInfo, 'receivedAt'> & { receivedAt: Date };
const receiptInfo = (row: ReceiptRow): ReceiptInfo => ({
  ...row,
  receivedAt: row.receivedAt.toISOString(),
  rawBody: row.rawBody && new Uint8Array(row.rawBody),
});

const DELIVERY_FILTERS: Record<keyof Omit<ListDeliveriesQuery, 'limit'>, (p: string) => string> = {
  state: (p) => `state = ${p}`,
  sink: (p) => `sink = ${p}`,
  callId: (p) => `call_id = ${p}`,
  after: (p) => `id > ${p}::bigint`,
};

const DELIVERY_COLUMNS = `SELECT id, call_id AS "callId", sink, state, attempts, next_attempt_at AS "nextAttemptAt",
  last_error AS "lastError", updated_at AS "updatedAt" FROM deliveries`;

/**
 * `$n` for each filter that has a value, in a query ordered by id; a text value is made storable first. Newest
 * first reads the id index backwards, and its cursor goes backwards too.
 */
function page(
  select: string,
  filters: Record<string, (p: string) => string>,
  values: Record<string, unknown>,
  limit: number | undefined,
  order: PageOrder = 'asc',
) {
  const params: unknown[] = [];
  const where: string[] = [];
  for (const [name, fragment] of Object.entries(filters)) {
    const value = values[name];
    if (value == null) continue;
    params.push(typeof value === 'string' ? pgText(value) : value);
    const sql = fragment(`$${params.length}`);
    where.push(order === 'desc' && name === 'after' ? sql.replace('>', '<') : sql);
  }
  params.push(pageLimit(limit));
  const by = order === 'desc' ? 'id DESC' : 'id';
  return {
    text: `${select}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ${by} LIMIT $${params.length}`,
    values: params,
  };
}

/** listCalls' statement and its parameters, as the store runs it (its query plan is tested). */
export function callsPageQuery(query: ListCallsQuery): { text: string; values: unknown[] } {
  // `review: false` and `hideTest: false` are no filter.
  const values = {
    ...query,
    from: timeBound(query.from, 'from'),
    to: timeBound(query.to, 'to'),
    source: query.source === undefined ? undefined : [query.source].flat(),
    hideTest: query.hideTest || undefined,
    review: query.review || undefined,
  };
  return page('SELECT record, status, raw, duplicates FROM calls', CALL_FILTERS, values, query.limit, query.order);
}

/** Inserts a pending delivery per sink, due now; `onConflict` says what an existing one becomes. */
const insertDeliveries = (onConflict: string) => `
  INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
  SELECT $1, sink, 'pending', $2, $2, $2 FROM unnest($3::text[]) AS sink
  ON CONFLICT (call_id, sink) ${onConflict}`;

export function postgresAdmin(pool: pg.Pool): PostgresAdmin {
  return {
    getCall: async (id) => {
      const { rows } = await pool.query<CallRow>('SELECT record, status, raw, duplicates FROM calls WHERE id = $1', [
        pgText(id),
      ]);
      return rows[0] && storedCall(rows[0]);
    },
    listCalls: async (query) => (await pool.query<CallRow>(callsPageQuery(query))).rows.map(storedCall),
    callerHistory: async (phone, limit) => {
      const [count, calls] = await Promise.all([
        pool.query<{ count: string }>(CALLER_HISTORY_SQL.count, [pgText(phone)]),
        pool.query<{ record: CallRecord }>(CALLER_HISTORY_SQL.calls, [pgText(phone), limit]),
      ]);
      return { count: Number(count.rows[0]!.count), records: calls.rows.map((row) => storedRecord(row.record)) };
    },
    listDeliveries: async (query) =>
      (await pool.query<DeliveryInfo>(page(DELIVERY_COLUMNS, DELIVERY_FILTERS, { ...query }, query.limit))).rows,
    deliveryStats: async () => (await pool.query<DeliveryStat>(DELIVERY_STATS_SQL)).rows,
    listAttempts: async (callId) => {
      const { rows } = await pool.query<Omit<AttemptInfo, 'startedAt'> & { startedAt: Date }>(
        `SELECT a.delivery_id AS "deliveryId", d.sink, a.attempt, a.started_at AS "startedAt", a.duration_ms AS "durationMs",
           a.outcome, a.http_status AS "httpStatus", a.error, a.note
         FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.call_id = $1 ORDER BY a.id`,
        [pgText(callId)],
      );
      return rows.map((row) => ({ ...row, startedAt: row.startedAt.toISOString() }));
    },
    listReceipts: async (callId) => {
      const { rows } = await pool.query<ReceiptRow>(`${RECEIPT_COLUMNS} WHERE call_id = $1 ORDER BY id`, [
        pgText(callId),
      ]);
      return rows.map(receiptInfo);
    },
    listReceiptPage: async (query) => {
      const values = {
        ...query,
        from: timeBound(query.from, 'from'),
        to: timeBound(query.to, 'to'),
        hideTest: query.hideTest || undefined,
      };
      return (
        await pool.query<ReceiptRow>(page(RECEIPT_COLUMNS, RECEIPT_FILTERS, values, query.limit, query.order))
      ).rows.map(receiptInfo);
    },
    getReceipt: async (id) => {
      const { rows } = await pool.query<ReceiptRow>(`${RECEIPT_COLUMNS} WHERE id = $1`, [id]);
      return rows[0] && receiptInfo(rows[0]);
    },
    // Never in flight: the state is dead or pending (retryState). A claim racing this UPDATE holds the row; once it
    // commits, PostgreSQL re-checks the WHERE against the claimed row, finds it in flight and leaves it.
    retryDeliveries: async ({ state, sink, callId, ids }) => {
      const { rowCount } = await pool.query(
        `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, lease_until = NULL, updated_at = $1
         WHERE state = $2 AND ($3::text IS NULL OR sink = $3) AND ($4::text IS NULL OR call_id = $4)
           AND ($5::bigint[] IS NULL OR id = ANY($5))`,
        [Date.now(), retryState(state), pgText(sink), pgText(callId), ids ?? null],
      );
      return rowCount ?? 0;
    },
    redeliver: (callId, sinks) =>
      inTransaction(pool, async (client) => {
        // KEY SHARE keeps a purge from deleting the call meanwhile, without waiting on writers of its other columns.
        const found = await client.query('SELECT 1 FROM calls WHERE id = $1 FOR KEY SHARE', [pgText(callId)]);
        if (found.rowCount === 0) return undefined;
        const { rowCount } = await client.query(
          insertDeliveries(`DO UPDATE SET
            state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, lease_until = NULL, updated_at = excluded.updated_at
            WHERE deliveries.state IN ('done', 'dead')`),
          [pgText(callId), Date.now(), uniqueSinks(sinks).map((sink) => pgText(sink))],
        );
        return rowCount ?? 0;
      }),
    // A second release waits on the row lock of the first, then finds the call accepted and changes nothing.
    release: (callId, sinks) =>
      inTransaction(pool, async (client) => {
        const { rowCount } = await client.query(
          `UPDATE calls SET status = 'accepted' WHERE id = $1 AND status = 'held'`,
          [pgText(callId)],
        );
        if (rowCount === 0) return false;
        // A redeliver may already have sent a held call to a sink; its delivery is kept as it is.
        await client.query(insertDeliveries('DO NOTHING'), [
          pgText(callId),
          Date.now(),
          uniqueSinks(sinks).map((sink) => pgText(sink)),
        ]);
        return true;
      }),
    // The row lock is held from the read of the revision to the commit: a second edit of the call waits for it, then
    // finds the revision moved on (stale) instead of overwriting the first.
    editCall: (callId, entry, record) =>
      inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ revision: number; content_hash: string | null; record: unknown }>(
          `SELECT ${REVISION} AS revision, content_hash, CASE WHEN content_hash IS NULL THEN record END AS record FROM calls WHERE id = $1 FOR UPDATE`,
          [pgText(callId)],
        );
        const row = rows[0];
        if (!row) return 'missing' as const;
        if (row.revision !== (record ? record.revision - 1 : entry.revision)) return 'stale' as const;
        if (record) {
          // A call stored before its hash had a column (or by a replica of the version before migration 4) is hashed
          // from its record before the edit changes it.
          const hash = row.content_hash ?? recordContentHash(row.record);
          await client.query('UPDATE calls SET record = $2, content_hash = $3 WHERE id = $1', [
            pgText(callId),
            JSON.stringify(record),
            hash,
          ]);
        }
        await client.query('INSERT INTO call_edits (call_id, revision, reviewed, entry) VALUES ($1, $2, $3, $4)', [
          pgText(callId),
          entry.revision,
          entry.reviewed === true,
          JSON.stringify(entry),
        ]);
        return 'edited' as const;
      }),
    listEdits: async (callId) => {
      const { rows } = await pool.query<{ entry: CallEdit }>(
        'SELECT entry FROM call_edits WHERE call_id = $1 ORDER BY id',
        [pgText(callId)],
      );
      return rows.map((row) => row.entry);
    },
  };
}
