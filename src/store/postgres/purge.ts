import type pg from 'pg';
import { type PurgeCounts, type PurgeOptions, purgeSources } from '../maintenance.js';
import { inTransaction } from './client.js';

/**
 * `callhook purge` on PostgreSQL (docs/reference.md#command-line; Store.purge says what goes and what stays), with the
 * rules written as in sqlite/purge.ts: predicates read alike by the dry run's count and by the delete. By age, $1 is
 * the cutoff, $2 whether refused requests not yet ingested go too; by source, $1 is the cutoff or null, $2 the sources.
 */

/** A call purge deletes: received before the cutoff, not held (the store is its only copy), every delivery done. */
const CALL_GOES = `c.received_at < $1 AND c.status <> 'held'
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.call_id = c.id AND d.state <> 'done')`;

/** A receipt old enough, and not a refused request still waiting to be ingested unless those are included. */
const RECEIPT_OLD = `r.received_at < $1 AND ($2::boolean OR r.outcome <> 'rejected' OR r.ingested_as IS NOT NULL)`;

/**
 * The receipts of a call, and a refused request's ingested as it, stay while the call does. Counting, "stays" is
 * "is not going"; deleting after the calls in the same transaction, it is "is still there".
 */
const RECEIPT_GOES_COUNTED = `${RECEIPT_OLD} AND NOT EXISTS (
  SELECT 1 FROM calls c WHERE c.id IN (r.call_id, r.ingested_as) AND NOT (${CALL_GOES}))`;
const RECEIPT_GOES = `${RECEIPT_OLD} AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id IN (r.call_id, r.ingested_as))`;

/**
 * A test call a purge by source deletes (docs/reference.md#command-line): of a source asked for, before the cutoff if
 * there is one, held or not, owed or not, but not while a worker is sending it (a delivery in flight). Its receipts
 * (`call_id`: its own and its duplicates') go with it; an ingest never stores a test source (it is `recovered`).
 */
const TEST_CALL_GOES = `c.source = ANY($2::text[]) AND ($1::timestamptz IS NULL OR c.received_at < $1)
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.call_id = c.id AND d.state = 'in_flight')`;

/** Beside the 16 shards connections write by their pid (pg_backend_pid() % 16). */
const PURGE_COUNT_SHARD = 16;

export function postgresPurge(pool: pg.Pool) {
  const params = (before: Date | null, { includeRefused = false }: PurgeOptions) => [
    before?.toISOString(),
    includeRefused,
  ];
  const countByAge = `SELECT (SELECT count(*) FROM calls c WHERE ${CALL_GOES}) AS calls,
    (SELECT count(*) FROM receipts r WHERE ${RECEIPT_GOES_COUNTED}) AS receipts`;
  const countBySource = `SELECT (SELECT count(*) FROM calls c WHERE ${TEST_CALL_GOES}) AS calls,
    (SELECT count(*) FROM receipts r WHERE r.call_id IN (SELECT c.id FROM calls c WHERE ${TEST_CALL_GOES})) AS receipts`;
  // One statement: the calls' ids feed the receipts' delete, whatever the calls' delete leaves visible to it.
  const deleteBySource = `WITH calls_gone AS (DELETE FROM calls c WHERE ${TEST_CALL_GOES} RETURNING c.id),
    receipts_gone AS (DELETE FROM receipts r WHERE r.call_id IN (SELECT id FROM calls_gone) RETURNING 1)
    SELECT (SELECT count(*) FROM calls_gone)::int AS calls, (SELECT count(*) FROM receipts_gone)::int AS receipts`;

  return {
    /** One statement, so both counts come from one snapshot. */
    purgeable: async (before: Date | null, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const sources = purgeSources(before, options);
      const { rows } = await pool.query<PurgeCounts>(
        sources ? countBySource : countByAge,
        sources ? [before?.toISOString() ?? null, sources] : params(before, options),
      );
      return { calls: rows[0]!.calls, receipts: rows[0]!.receipts };
    },

    /**
     * One transaction: replicas keep committing beside it (row locks only on what it deletes), and a purge cut
     * short leaves nothing half done. The call rows' deliveries and attempts go with them (ON DELETE CASCADE).
     */
    purge: async (before: Date | null, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const sources = purgeSources(before, options);
      // One statement, not steps: a signal can only keep it from starting.
      if (options.signal?.aborted) return { calls: 0, receipts: 0 };
      return inTransaction(pool, async (client) => {
        // The deliveries' counts this purge lowers stay locked until it commits: in a shard no worker writes
        // (postgres/schema.ts, migration 5), so none waits for the purge to end.
        await client.query(`SET LOCAL callhook.count_shard = ${PURGE_COUNT_SHARD}`);
        let purged: PurgeCounts;
        if (sources) {
          const { rows } = await client.query<PurgeCounts>(deleteBySource, [before?.toISOString() ?? null, sources]);
          purged = { calls: rows[0]!.calls, receipts: rows[0]!.receipts };
        } else {
          const [cutoff, includeRefused] = params(before, options);
          const calls = await client.query(`DELETE FROM calls c WHERE ${CALL_GOES}`, [cutoff]);
          const receipts = await client.query(`DELETE FROM receipts r WHERE ${RECEIPT_GOES}`, [cutoff, includeRefused]);
          purged = { calls: calls.rowCount ?? 0, receipts: receipts.rowCount ?? 0 };
        }
        options.onProgress?.(purged);
        return purged;
      });
    },
  };
}
