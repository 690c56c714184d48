import { setImmediate as yieldTurn } from 'node:timers/promises';
import type pg from 'pg';
import { callWithout, droppedRaw, type StoredBody } from '../../privacy/retain-call.js';
import {
  type CallsMark,
  callsPass,
  EPOCH,
  markKey,
  minIso,
  parseMark,
  type ReceiptsRetained,
  type RetentionOptions,
  type RetentionStore,
  SETTLE_MS,
} from '../retention.js';
import { inTransaction } from './client.js';

/**
 * The retention on PostgreSQL (store/retention.ts says what each method does), as on SQLite: a chunk of rows a
 * transaction, locked as they are read (FOR UPDATE), so an operator's edit waits for the chunk or the chunk for it, and
 * replicas running a pass at once rewrite each call once. The rows are rewritten by privacy/retain-call.ts, as SQLite's.
 */

/** Rows per transaction: short transactions, each holding the locks of a few hundred rows. */
const CHUNK = 200;

interface CallRow {
  id: string;
  /** As PostgreSQL writes it, to the microsecond: where the next chunk starts, exactly. */
  received_at: string;
  record: string;
  raw: string;
  dedup_key: string | null;
}

/** The receipts' mark: every receipt received before `through` was done. */
interface ReceiptsMark {
  through: string;
}

const CALL_COLUMNS = 'id, received_at::text AS received_at, record::text AS record, raw::text AS raw, dedup_key';
const BY_AGE = `SELECT ${CALL_COLUMNS} FROM calls
  WHERE received_at >= $1 AND received_at < $2 AND (received_at, id) > ($1::timestamptz, $3::text)
  ORDER BY received_at, id LIMIT $4 FOR UPDATE`;
const BY_ID = `SELECT ${CALL_COLUMNS} FROM calls
  WHERE id > $1 AND id <= $2 AND received_at < $3 ORDER BY id LIMIT $4 FOR UPDATE`;
const SET_CALLS = `UPDATE calls c SET record = coalesce(v.record::json, c.record), raw = coalesce(v.raw::json, c.raw),
    dedup_key = coalesce(v.dedup_key, c.dedup_key)
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v (id, record, raw, dedup_key) WHERE c.id = v.id`;
const SET_EDITS = `UPDATE call_edits e SET entry = v.entry::json
  FROM unnest($1::bigint[], $2::text[]) AS v (id, entry) WHERE e.id = v.id`;
const SET_BODIES = `UPDATE receipts r SET raw_body = v.raw_body, query = v.query
  FROM unnest($1::bigint[], $2::bytea[], $3::text[]) AS v (id, raw_body, query) WHERE r.id = v.id`;
// In (received_at, id) order from the mark, read by the receipts_received index.
const RECEIPTS = `SELECT id, received_at::text AS received_at, outcome = 'rejected' AND ingested_as IS NULL AS refused,
    raw_body IS NOT NULL OR query IS NOT NULL AS kept FROM receipts
  WHERE received_at >= $1 AND received_at < $2 AND (received_at, id) > ($1::timestamptz, $3::bigint)
  ORDER BY received_at, id LIMIT $4 FOR UPDATE`;

export function postgresRetention(pool: pg.Pool): RetentionStore {
  const markOf = async <T extends object>(kind: string, keys: readonly (keyof T)[]) => {
    const { rows } = await pool.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [markKey(kind)]);
    return parseMark<T>(rows[0]?.value, keys);
  };
  const setMark = (kind: string, mark: object) =>
    pool.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [
      markKey(kind),
      JSON.stringify(mark),
    ]);

  /**
   * Runs `chunk` in a transaction of its own until it reads fewer than CHUNK rows or `signal` ends it, a turn of the
   * loop between two.
   */
  const inChunks = async (signal: AbortSignal | undefined, chunk: (client: pg.PoolClient) => Promise<number>) => {
    while (!signal?.aborted && (await inTransaction(pool, chunk)) === CHUNK) await yieldTurn();
  };

  /** One pass of a kind over the calls (store/retention.ts callsPass), as sqlite/retention.ts walks it. */
  const walkCalls = async (
    kind: string,
    before: Date,
    { now = new Date(), signal }: RetentionOptions,
    change: (client: pg.PoolClient, rows: CallRow[]) => Promise<number>,
  ) => {
    const pass = callsPass(await markOf<CallsMark>(kind, ['through', 'seen']), before, now);
    let changed = 0;
    let afterAt = pass.byAge.from;
    let afterId = '';
    await inChunks(signal, async (client) => {
      const { rows } = await client.query<CallRow>(BY_AGE, [afterAt, pass.byAge.before, afterId, CHUNK]);
      changed += await change(client, rows);
      const last = rows.at(-1);
      if (last) [afterAt, afterId] = [last.received_at, last.id];
      return rows.length;
    });
    let after = pass.byId.after;
    await inChunks(signal, async (client) => {
      const { top, before: olderThan } = pass.byId;
      const { rows } = await client.query<CallRow>(BY_ID, [after, top, olderThan, CHUNK]);
      changed += await change(client, rows);
      after = rows.at(-1)?.id ?? after;
      return rows.length;
    });
    if (!signal?.aborted) await setMark(kind, pass.next);
    return changed;
  };

  const setCalls = (
    client: pg.PoolClient,
    calls: { id: string; record?: string; raw?: string; dedupKey?: string }[],
  ) =>
    calls.length === 0
      ? undefined
      : client.query(SET_CALLS, [
          calls.map((c) => c.id),
          calls.map((c) => c.record ?? null),
          calls.map((c) => c.raw ?? null),
          calls.map((c) => c.dedupKey ?? null),
        ]);

  return {
    dropRawRequests: (before, options = {}) => {
      const at = (options.now ?? new Date()).toISOString();
      return walkCalls('raw', before, options, async (client, rows) => {
        const changed = rows.flatMap((row) => {
          const raw = droppedRaw(row.raw, at);
          return raw === undefined ? [] : [{ id: row.id, raw }];
        });
        await setCalls(client, changed);
        return changed.length;
      });
    },

    removeField: (field, before, options = {}) => {
      const at = (options.now ?? new Date()).toISOString();
      return walkCalls(`field:${field}`, before, options, async (client, rows) => {
        if (rows.length === 0) return 0;
        const ids = rows.map((row) => row.id);
        const edits = await client.query<{ id: number; call_id: string; entry: string }>(
          'SELECT id, call_id, entry::text AS entry FROM call_edits WHERE call_id = ANY($1::text[]) FOR UPDATE',
          [ids],
        );
        const bodies = await client.query<StoredBody & { call_id: string }>(
          `SELECT id, call_id, content_type AS "contentType", raw_body AS "rawBody", query FROM receipts
           WHERE call_id = ANY($1::text[]) AND (raw_body IS NOT NULL OR query IS NOT NULL) FOR UPDATE`,
          [ids],
        );
        const calls: { id: string; record?: string; raw?: string; dedupKey?: string }[] = [];
        const entries: { id: number; entry: string }[] = [];
        const receipts: { id: number; rawBody: Uint8Array | null; query: string | null }[] = [];
        for (const row of rows) {
          const changes = callWithout(
            field,
            {
              id: row.id,
              record: row.record,
              raw: row.raw,
              dedupKey: row.dedup_key,
              edits: edits.rows.filter((e) => e.call_id === row.id),
              receipts: bodies.rows.filter((b) => b.call_id === row.id),
            },
            at,
          );
          if (changes === undefined) continue;
          calls.push({ id: row.id, ...changes });
          entries.push(...changes.edits);
          receipts.push(...changes.receipts);
        }
        await setCalls(client, calls);
        if (entries.length > 0) await client.query(SET_EDITS, [entries.map((e) => e.id), entries.map((e) => e.entry)]);
        if (receipts.length > 0)
          await client.query(SET_BODIES, [
            receipts.map((r) => r.id),
            receipts.map((r) => (r.rawBody === null ? null : Buffer.from(r.rawBody))),
            receipts.map((r) => r.query),
          ]);
        return calls.length;
      });
    },

    /**
     * By received time from the mark: a receipt is written as its request arrives (a reconcile run's, which may be
     * older, hold no body and refuse nothing), so a pass need not look at what it passed before. The mark stays
     * SETTLE_MS behind the present: a receipt committed just after the pass read its range is not passed over.
     */
    dropReceipts: async (before, { now = new Date(), signal } = {}) => {
      const counts: ReceiptsRetained = { bodies: 0, refused: 0 };
      const from = (await markOf<ReceiptsMark>('receipts', ['through']))?.through ?? EPOCH;
      const cutoff = before.toISOString();
      let afterAt = from;
      let afterId = 0;
      await inChunks(signal, async (client) => {
        const { rows } = await client.query<{ id: number; received_at: string; refused: boolean; kept: boolean }>(
          RECEIPTS,
          [afterAt, cutoff, afterId, CHUNK],
        );
        const refused = rows.filter((r) => r.refused).map((r) => r.id);
        const kept = rows.filter((r) => !r.refused && r.kept).map((r) => r.id);
        if (refused.length > 0)
          counts.refused += (await client.query('DELETE FROM receipts WHERE id = ANY($1::bigint[])', [refused]))
            .rowCount!;
        if (kept.length > 0)
          counts.bodies += (
            await client.query('UPDATE receipts SET raw_body = NULL, query = NULL WHERE id = ANY($1::bigint[])', [kept])
          ).rowCount!;
        const last = rows.at(-1);
        if (last) [afterAt, afterId] = [last.received_at, last.id];
        return rows.length;
      });
      const settled = new Date(now.getTime() - SETTLE_MS).toISOString();
      if (!signal?.aborted) await setMark('receipts', { through: minIso(cutoff, settled) } satisfies ReceiptsMark);
      return counts;
    },

    // Deleted rows stay in the table's files as dead tuples until VACUUM reuses their space (docs/reference.md#retention).
    truncateLog: async () => true,
  };
}
