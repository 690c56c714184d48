import type pg from 'pg';
import type { PurgeCounts, PurgeOptions } from '../maintenance.js';
import { inTransaction } from './client.js';

/**
 * `callhook purge` on PostgreSQL (docs/reference.md#command-line; Store.purge says what goes and what stays), with the
 * rules written as in sqlite/purge.ts: two predicates, read alike by the dry run's count and by the delete. $1 is the
 * cutoff, $2 whether refused requests not yet ingested go too.
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

/** Beside the 16 shards connections write by their pid (pg_backend_pid() % 16). */
const PURGE_COUNT_SHARD = 16;

export function postgresPurge(pool: pg.Pool) {
  const params = (before: Date, { includeRefused = false }: PurgeOptions) => [before.toISOString(), includeRefused];
  return {
    /** One statement, so both counts come from one snapshot. */
    purgeable: async (before: Date, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const { rows } = await pool.query<PurgeCounts>(
        `SELECT (SELECT count(*) FROM calls c WHERE ${CALL_GOES}) AS calls,
          (SELECT count(*) FROM receipts r WHERE ${RECEIPT_GOES_COUNTED}) AS receipts`,
        params(before, options),
      );
      return { calls: rows[0]!.calls, receipts: rows[0]!.receipts };
    },

    /**
     * One transaction: replicas keep committing beside it (row locks only on what it deletes), and a purge cut
     * short leaves nothing half done. The call rows' deliveries and attempts go with them (ON DELETE CASCADE).
     */
    purge: (before: Date, options: PurgeOptions = {}): Promise<PurgeCounts> =>
      inTransaction(pool, async (client) => {
        const [cutoff, includeRefused] = params(before, options);
        // The deliveries' counts this purge lowers stay locked until it commits: in a shard no worker writes
        // (postgres/schema.ts, migration 5), so none waits for the purge to end.
        await client.query(`SET LOCAL callhook.count_shard = ${PURGE_COUNT_SHARD}`);
        const calls = await client.query(`DELETE FROM calls c WHERE ${CALL_GOES.replaceAll('$1', '$1')}`, [cutoff]);
        const receipts = await client.query(`DELETE FROM receipts r WHERE ${RECEIPT_GOES}`, [cutoff, includeRefused]);
        const purged = { calls: calls.rowCount ?? 0, receipts: receipts.rowCount ?? 0 };
        options.onProgress?.(purged);
        return purged;
      }),
  };
}
