import type Database from 'better-sqlite3';
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
import { inChunks } from './chunks.js';
import type { SqliteReader } from './reader.js';
import { parseStored } from './rows.js';
import { registerTextFunctions } from './text.js';

/** The SQLite store's reads and admin writes (docs/reference.md#operating): what /admin and the CLI ask of it. */

type Db = Database.Database;

export type SqliteAdmin = AdminReadsAndEdits;

interface CallRow {
  record: string;
  status: StoredCall['status'];
  raw: string;
  duplicates: number;
}

/** A field of `data` as text, as PostgreSQL's `->>` gives it, so a number compares with its digits. */
export const dataField = (name: string) => `CAST(json_extract(record, '$.data.${name}') AS TEXT)`;

/**
 * A caller's history (an in-call hook's answer). Both walk the calls_phone index, whose expression this is: the
 * count reads the index alone, and ORDER BY id DESC reads it backwards, so neither sorts nor scans the table.
 * No status filter: every stored call is accepted or held, and both count as the caller's calls.
 */
export const CALLER_HISTORY_SQL = {
  count: `SELECT COUNT(*) FROM calls WHERE ${dataField('phone_number')} = ?`,
  calls: `SELECT record FROM calls WHERE ${dataField('phone_number')} = ? ORDER BY id DESC LIMIT ?`,
};

/** The record's revision: 1 for one stored before records carried it (record.ts storedRecord). */
const REVISION = `coalesce(json_extract(calls.record, '$.revision'), 1)`;

/**
 * docs/reference.md#editing-a-call: held, or with problems and no review mark at the current revision. A record that is
 * not callhook's (a row edited by hand) has no array of problems, and json_array_length gives NULL: not in the queue.
 */
const IN_REVIEW = `(status = 'held' OR (json_array_length(calls.record, '$.problems') > 0 AND NOT EXISTS (
  SELECT 1 FROM call_edits e WHERE e.call_id = calls.id AND e.reviewed = 1 AND e.revision = ${REVISION})))`;

/** A receipt of a request that was not test traffic: NULL is one written before receipts kept their source. */
const RECEIPT_NOT_TEST = `(receipts.source IS NULL OR receipts.${NOT_TEST})`;

/**
 * Each filter is a fixed fragment with a named parameter; a query joins the fragments of the filters it has, so the
 * indexes on status, received_at, phone, recording URL and (state, sink, id) serve it, where `@x IS NULL OR …` would
 * hide them.
 */
const CALL_FILTERS: Record<keyof Omit<ListCallsQuery, 'limit' | 'order'>, string> = {
  hook: 'hook = @hook',
  status: 'status = @status',
  source: 'source IN (SELECT value FROM json_each(@source))',
  platform: `coalesce(json_extract(record, '$.platform'), '${NO_PLATFORM}') = @platform`,
  outcome: `callhook_fold(${dataField('call_outcome')}) = callhook_fold(@outcome)`,
  sentiment: `callhook_lower(${dataField('sentiment_analysis')}) = callhook_lower(@sentiment)`,
  phone: `${dataField('phone_number')} = @phone`,
  recordingUrl: `${dataField('recording_url')} = @recordingUrl`,
  from: 'received_at >= @from',
  to: 'received_at < @to',
  text: 'instr(callhook_lower(record), callhook_lower(@text)) > 0',
  // A term of its own beside the parameter's (SQLite splits the WHERE at every AND), for the calls_live index.
  hideTest: `(@hideTest = 1 AND ${NOT_TEST})`,
  // docs/reference.md#test-traffic: test traffic is never in the queue.
  review: `(@review = 1 AND ${IN_REVIEW} AND ${NOT_TEST})`,
  after: 'id > @after',
};

const RECEIPT_FILTERS: Record<keyof Omit<ListReceiptsQuery, 'limit' | 'order'>, string> = {
  outcome: 'outcome = @outcome',
  hook: 'hook = @hook',
  from: 'received_at >= @from',
  to: 'received_at < @to',
  hideTest: `(@hideTest = 1 AND ${RECEIPT_NOT_TEST})`,
  after: 'id > @after',
};

const DELIVERY_FILTERS: Record<keyof Omit<ListDeliveriesQuery, 'limit'>, string> = {
  state: 'state = @state',
  sink: 'sink = @sink',
  callId: 'call_id = @callId',
  after: 'id > @after',
};

/**
 * Deliveries by sink and state, for /metrics (docs/reference.md#metrics: a scrape's cost does not grow with the store).
 * The counts are the few rows the triggers of migration 5 keep. The oldest pending delivery of a sink is its
 * first by id in the (state, sink, id) index, one row read: ids grow in the order deliveries are made, as does
 * the created_at they are made with. INDEXED BY makes a missing index an error rather than a scan.
 */
export const DELIVERY_STATS_SQL = `
  SELECT c.sink, c.state, c.count, CASE WHEN c.state = 'pending' THEN (
    SELECT d.created_at FROM deliveries d INDEXED BY deliveries_state_sink WHERE d.state = 'pending' AND d.sink = c.sink ORDER BY d.id LIMIT 1
  ) END AS oldestCreatedAt
  FROM delivery_counts c WHERE c.count > 0
  ORDER BY c.sink, c.state`;

const CALL_COLUMNS = 'SELECT record, status, raw, duplicates FROM calls';
const RECEIPT_COLUMNS = `SELECT id, hook, call_id AS callId, received_at AS receivedAt, method, content_type AS contentType, size,
  status, outcome, error, raw_body AS rawBody, query, ingested_as AS ingestedAs FROM receipts`;
const DELIVERY_COLUMNS = `SELECT id, call_id AS callId, sink, state, attempts, next_attempt_at AS nextAttemptAt,
  last_error AS lastError, updated_at AS updatedAt FROM deliveries`;

/**
 * A page's SELECT: the fragments of the filters that have a value, joined, in id order. Newest first reads the same id
 * index backwards, and its cursor goes backwards too.
 */
function pageQuery(
  select: string,
  filters: Record<string, string>,
  values: Record<string, unknown>,
  limit: number | undefined,
  order: PageOrder = 'asc',
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { limit: pageLimit(limit) };
  const where: string[] = [];
  for (const [name, fragment] of Object.entries(filters)) {
    if (values[name] == null) continue;
    params[name] = values[name];
    where.push(order === 'desc' && name === 'after' ? fragment.replace('>', '<') : fragment);
  }
  return {
    sql: `${select}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${order === 'desc' ? 'DESC' : ''} LIMIT @limit`,
    params,
  };
}

/** listCalls' statement and its parameters, as the store runs it (its query plan is tested). */
export function callsPageQuery(query: ListCallsQuery): { sql: string; params: Record<string, unknown> } {
  // SQLite binds no booleans; `review: false` and `hideTest: false` are no filter.
  const values = {
    ...query,
    from: timeBound(query.from, 'from'),
    to: timeBound(query.to, 'to'),
    source: query.source === undefined ? undefined : JSON.stringify([query.source].flat()),
    hideTest: query.hideTest ? 1 : undefined,
    review: query.review ? 1 : undefined,
  };
  return pageQuery(CALL_COLUMNS, CALL_FILTERS, values, query.limit, query.order);
}

export function sqliteAdmin(db: Db, reader: SqliteReader): SqliteAdmin {
  registerTextFunctions(db);

  const stmts = prepareStatements(db);
  // Lists may scan whole tables (a text search, an outcome): they are read on the reader thread.
  const page = <T>(...args: Parameters<typeof pageQuery>) => {
    const { sql, params } = pageQuery(...args);
    return reader.all<T>(sql, params);
  };

  return {
    getCall: async (id) => toStoredCall(stmts.getCall.get(id) as CallRow | undefined),
    listCalls: async (query) => {
      const { sql, params } = callsPageQuery(query);
      return (await reader.all<CallRow>(sql, params)).map((row) => toStoredCall(row)!);
    },
    callerHistory: async (phone, limit) => ({
      count: stmts.countByPhone.get(phone) as number,
      records: (stmts.callsByPhone.all(phone, limit) as string[]).map((record) =>
        storedRecord(JSON.parse(record) as CallRecord),
      ),
    }),
    listDeliveries: (query) => page<DeliveryInfo>(DELIVERY_COLUMNS, DELIVERY_FILTERS, { ...query }, query.limit),
    deliveryStats: () => reader.all<DeliveryStat>(DELIVERY_STATS_SQL),
    listAttempts: async (callId) => stmts.listAttempts.all(callId) as AttemptInfo[],
    listReceipts: async (callId) => (stmts.listReceipts.all(callId) as ReceiptInfo[]).map(receiptInfo),
    listReceiptPage: async (query) => {
      const values = {
        ...query,
        from: timeBound(query.from, 'from'),
        to: timeBound(query.to, 'to'),
        hideTest: query.hideTest ? 1 : undefined,
      };
      return (await page<ReceiptInfo>(RECEIPT_COLUMNS, RECEIPT_FILTERS, values, query.limit, query.order)).map(
        receiptInfo,
      );
    },
    getReceipt: async (id) => {
      const row = stmts.getReceipt.get(id) as ReceiptInfo | undefined;
      return row && receiptInfo(row);
    },
    retryDeliveries: async ({ state, sink, callId, ids }) => {
      const params = {
        state: retryState(state),
        sink: sink ?? null,
        call_id: callId ?? null,
        ids: ids === undefined ? null : JSON.stringify(ids),
        now: Date.now(),
      };
      // In id order from a cursor: a retried pending delivery is still pending, and must not be taken twice.
      let after = 0;
      return inChunks(db, (limit) => {
        const retried = stmts.retry.all({ ...params, after, limit }) as number[];
        after = Math.max(after, ...retried);
        return retried.length;
      });
    },
    redeliver: async (callId, sinks) =>
      db
        .transaction(() => {
          if (stmts.callStatus.get(callId) === undefined) return undefined;
          const now = Date.now();
          let scheduled = 0;
          for (const sink of uniqueSinks(sinks))
            scheduled += stmts.redeliver.run({ call_id: callId, sink, now }).changes;
          return scheduled;
        })
        .immediate(),
    release: async (callId, sinks) =>
      db
        .transaction(() => {
          if (stmts.release.run(callId).changes === 0) return false;
          const now = Date.now();
          for (const sink of uniqueSinks(sinks)) stmts.createDelivery.run({ call_id: callId, sink, now });
          return true;
        })
        .immediate(),
    // Under the write lock from the read of the revision to the commit: two edits of one call take turns, and the
    // second finds the revision moved on (stale) instead of overwriting the first.
    editCall: async (callId, entry, record) =>
      db
        .transaction(() => {
          const row = stmts.editTarget.get(callId) as
            | { revision: number; content_hash: string | null; record: string | null }
            | undefined;
          if (!row) return 'missing' as const;
          if (row.revision !== (record ? record.revision - 1 : entry.revision)) return 'stale' as const;
          if (record) {
            // A call stored before its hash had a column is hashed from its record before the edit changes it.
            const hash = row.content_hash ?? recordContentHash(parseStored(row.record!));
            stmts.editRecord.run({ id: callId, record: JSON.stringify(record), content_hash: hash });
          }
          stmts.insertEdit.run({
            call_id: callId,
            revision: entry.revision,
            reviewed: entry.reviewed ? 1 : 0,
            entry: JSON.stringify(entry),
          });
          return 'edited' as const;
        })
        .immediate(),
    listEdits: async (callId) =>
      (stmts.listEdits.all(callId) as string[]).map((entry) => JSON.parse(entry) as CallEdit),
  };
}

function prepareStatements(db: Db) {
  return {
    getCall: db.prepare(`${CALL_COLUMNS} WHERE id = ?`),
    callStatus: db.prepare('SELECT status FROM calls WHERE id = ?').pluck(),
    countByPhone: db.prepare(CALLER_HISTORY_SQL.count).pluck(),
    callsByPhone: db.prepare(CALLER_HISTORY_SQL.calls).pluck(),
    listAttempts: db.prepare(`
      SELECT a.delivery_id AS deliveryId, d.sink, a.attempt, a.started_at AS startedAt, a.duration_ms AS durationMs, a.outcome,
        a.http_status AS httpStatus, a.error, a.note
      FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.call_id = ? ORDER BY a.id`),
    listReceipts: db.prepare(`${RECEIPT_COLUMNS} WHERE call_id = ? ORDER BY id`),
    getReceipt: db.prepare(`${RECEIPT_COLUMNS} WHERE id = ?`),
    // Never in flight: the state is dead or pending (retryState), so a leased delivery is not taken from its worker.
    retry: db
      .prepare(`
      UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = @now, lease_until = NULL, updated_at = @now
      WHERE id IN (SELECT id FROM deliveries
        WHERE state = @state AND id > @after AND (@sink IS NULL OR sink = @sink) AND (@call_id IS NULL OR call_id = @call_id)
          AND (@ids IS NULL OR id IN (SELECT value FROM json_each(@ids)))
        ORDER BY id LIMIT @limit)
      RETURNING id`)
      .pluck(),
    // The WHERE of DO UPDATE leaves a pending or in-flight delivery as it is, and it then counts no change.
    redeliver: db.prepare(`
      INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES (@call_id, @sink, 'pending', @now, @now, @now)
      ON CONFLICT (call_id, sink) DO UPDATE SET
        state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, lease_until = NULL, updated_at = excluded.updated_at
      WHERE deliveries.state IN ('done', 'dead')`),
    release: db.prepare(`UPDATE calls SET status = 'accepted' WHERE id = ? AND status = 'held'`),
    editTarget: db.prepare(
      `SELECT ${REVISION} AS revision, content_hash, CASE WHEN content_hash IS NULL THEN record END AS record FROM calls WHERE id = ?`,
    ),
    editRecord: db.prepare('UPDATE calls SET record = @record, content_hash = @content_hash WHERE id = @id'),
    insertEdit: db.prepare(
      'INSERT INTO call_edits (call_id, revision, reviewed, entry) VALUES (@call_id, @revision, @reviewed, @entry)',
    ),
    listEdits: db.prepare('SELECT entry FROM call_edits WHERE call_id = ? ORDER BY id').pluck(),
    // A redeliver may already have sent a held call to a sink; its delivery is kept as it is.
    createDelivery: db.prepare(`
      INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at) VALUES (@call_id, @sink, 'pending', @now, @now, @now)
      ON CONFLICT (call_id, sink) DO NOTHING`),
  };
}

/** A BLOB comes back as a Buffer (from the reader thread, as a plain Uint8Array): either is a Uint8Array. */
const receiptInfo = (row: ReceiptInfo): ReceiptInfo => ({
  ...row,
  rawBody: row.rawBody && new Uint8Array(row.rawBody),
});

function toStoredCall(row: CallRow | undefined): StoredCall | undefined {
  if (!row) return undefined;
  return {
    record: storedRecord(JSON.parse(row.record) as CallRecord),
    status: row.status,
    raw: JSON.parse(row.raw) as RawRequest,
    duplicates: row.duplicates,
  };
}
