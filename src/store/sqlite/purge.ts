import type Database from 'better-sqlite3';
import type { PurgeCounts, PurgeOptions } from '../maintenance.js';
import { inChunks } from './chunks.js';

/**
 * `callhook purge` on SQLite (docs/reference.md#command-line; Maintenance.purge says what goes and what stays). The
 * rules live in two SQL predicates, so the count of a dry run and the delete read the same words.
 */

/** A call purge deletes: received before the cutoff, not held (the store is its only copy), every delivery done. */
const CALL_GOES = `c.received_at < @cutoff AND c.status <> 'held'
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.call_id = c.id AND d.state <> 'done')`;

/** A receipt old enough, and not a refused request still waiting to be ingested unless those are included. */
const RECEIPT_OLD = `r.received_at < @cutoff AND (@includeRefused OR r.outcome <> 'rejected' OR r.ingested_as IS NOT NULL)`;

/**
 * The receipts of a call, and a refused request's ingested as it, are part of the call's history: they stay while
 * the call does. Counting, "stays" is "is not going"; deleting (after the calls), it is "is still there".
 */
const RECEIPT_GOES_COUNTED = `${RECEIPT_OLD} AND NOT EXISTS (
  SELECT 1 FROM calls c WHERE c.id IN (r.call_id, r.ingested_as) AND NOT (${CALL_GOES}))`;
const RECEIPT_GOES = `${RECEIPT_OLD} AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id IN (r.call_id, r.ingested_as))`;

export function sqlitePurge(db: Database.Database) {
  const stmts = {
    count: db.prepare(`SELECT (SELECT count(*) FROM calls c WHERE ${CALL_GOES}) AS calls,
      (SELECT count(*) FROM receipts r WHERE ${RECEIPT_GOES_COUNTED}) AS receipts`),
    lastCall: db.prepare('SELECT max(rowid) AS last FROM calls c WHERE c.received_at < @cutoff'),
    calls: db.prepare(`SELECT rowid AS at, id, ${CALL_GOES} AS goes FROM calls c
      WHERE rowid > @after AND rowid <= @last ORDER BY rowid LIMIT @limit`),
    deleteCalls: db.prepare('DELETE FROM calls WHERE id IN (SELECT value FROM json_each(@ids))'),
    lastReceipt: db.prepare('SELECT max(id) AS last FROM receipts r WHERE r.received_at < @cutoff'),
    receipts: db.prepare(`SELECT id AS at, id, ${RECEIPT_GOES} AS goes FROM receipts r
      WHERE id > @after AND id <= @last ORDER BY id LIMIT @limit`),
    deleteReceipts: db.prepare('DELETE FROM receipts WHERE id IN (SELECT value FROM json_each(@ids))'),
  };
  const params = (before: Date, { includeRefused = false }: PurgeOptions) => ({
    cutoff: before.toISOString(),
    includeRefused: includeRefused ? 1 : 0,
  });

  return {
    /** One statement, so both counts come from one snapshot of the store. */
    purgeable: async (before: Date, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const { calls, receipts } = stmts.count.get(params(before, options)) as PurgeCounts;
      return { calls, receipts };
    },

    /**
     * Calls first, then the receipts no call keeps. Each walks its table in rowid order up to the last row old
     * enough, a chunk (sqlite/chunks.ts) at a time: a chunk looks at a bounded number of rows and deletes those
     * that go, so the calls and receipts that stay (held, owed, refused) are read once, not again by every chunk,
     * and each chunk's transaction decides on the rows it deletes under the write lock.
     */
    purge: async (before: Date, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const purged: PurgeCounts = { calls: 0, receipts: 0 };
      const p = params(before, options);
      const walks = [
        ['calls', stmts.lastCall, stmts.calls, stmts.deleteCalls],
        ['receipts', stmts.lastReceipt, stmts.receipts, stmts.deleteReceipts],
      ] as const;
      for (const [what, lastOld, chunkOf, remove] of walks) {
        const { last } = lastOld.get(p) as { last: number | null };
        if (last === null) continue;
        let after = -1;
        await inChunks(
          db,
          (limit) => {
            const rows = chunkOf.all({ ...p, after, last, limit }) as {
              at: number;
              id: string | number;
              goes: number;
            }[];
            const going = rows.filter((row) => row.goes).map((row) => row.id);
            if (going.length > 0) purged[what] += remove.run({ ids: JSON.stringify(going) }).changes;
            after = rows.at(-1)?.at ?? after;
            return rows.length;
          },
          () => options.onProgress?.({ ...purged }),
        );
      }
      return purged;
    },
  };
}
