import type Database from 'better-sqlite3';
import { type PurgeCounts, type PurgeOptions, purgeSources, type TestSource } from '../maintenance.js';
import { BACKGROUND, BULK, inChunks } from './chunks.js';

/**
 * `callhook purge` on SQLite (docs/reference.md#command-line; Maintenance.purge says what goes and what stays). The
 * rules live in SQL predicates, so the count of a dry run and the delete read the same words.
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

/**
 * A test call a purge by source deletes (docs/reference.md#command-line): of a source asked for, before the cutoff if
 * there is one, held or not, owed or not (test traffic is nobody's only copy of a call), but not while a worker is
 * sending it: the attempt in flight would be recorded against a call that is gone.
 */
const TEST_CALL_GOES = `c.source IN (SELECT value FROM json_each(@sources))
  AND (@cutoff IS NULL OR c.received_at < @cutoff)
  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.call_id = c.id AND d.state = 'in_flight')`;

/**
 * A test call's receipts are its own and its duplicates' (`call_id`): they go with it. None is a refused request
 * ingested as it, since an ingest stores its call with `source: recovered` (docs/reference.md#refused-requests).
 */
const TEST_RECEIPT_GOES_COUNTED = `r.call_id IN (SELECT c.id FROM calls c WHERE ${TEST_CALL_GOES})`;

type ChunkRow = { at: number; id: string | number; goes: number };

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
    countTest: db.prepare(`SELECT (SELECT count(*) FROM calls c WHERE ${TEST_CALL_GOES}) AS calls,
      (SELECT count(*) FROM receipts r WHERE ${TEST_RECEIPT_GOES_COUNTED}) AS receipts`),
    lastAnyCall: db.prepare('SELECT max(rowid) AS last FROM calls'),
    testCalls: db.prepare(`SELECT rowid AS at, id, ${TEST_CALL_GOES} AS goes FROM calls c
      WHERE rowid > @after AND rowid <= @last ORDER BY rowid LIMIT @limit`),
    deleteCallReceipts: db.prepare('DELETE FROM receipts WHERE call_id IN (SELECT value FROM json_each(@ids))'),
  };
  const params = (before: Date | null, { includeRefused = false }: PurgeOptions, sources?: readonly TestSource[]) => ({
    cutoff: before?.toISOString() ?? null,
    includeRefused: includeRefused ? 1 : 0,
    sources: JSON.stringify(sources ?? []),
  });

  /**
   * Walks a table in rowid order up to `last`, a chunk (sqlite/chunks.ts) at a time: a chunk looks at a bounded number
   * of rows and hands those that go to `remove`, so the rows that stay (held, owed, refused, real calls) are read once,
   * not again by every chunk, and each chunk's transaction decides on the rows it deletes under the write lock.
   */
  const walk = (
    last: number | null,
    chunkOf: Database.Statement,
    p: ReturnType<typeof params>,
    remove: (ids: (string | number)[]) => void,
    onChunk: () => void,
    { signal, background }: PurgeOptions,
  ) => {
    if (last === null) return Promise.resolve(0);
    let after = -1;
    return inChunks(
      db,
      (limit) => {
        if (signal?.aborted) return 0;
        const rows = chunkOf.all({ ...p, after, last, limit }) as ChunkRow[];
        const going = rows.filter((row) => row.goes).map((row) => row.id);
        if (going.length > 0) remove(going);
        after = rows.at(-1)?.at ?? after;
        return rows.length;
      },
      onChunk,
      background ? BACKGROUND : BULK,
    );
  };

  return {
    /** One statement, so both counts come from one snapshot of the store. */
    purgeable: async (before: Date | null, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const sources = purgeSources(before, options);
      const count = sources ? stmts.countTest : stmts.count;
      const { calls, receipts } = count.get(params(before, options, sources)) as PurgeCounts;
      return { calls, receipts };
    },

    /**
     * By age: calls first, then the receipts no call keeps. By source: each chunk of test calls with their receipts.
     */
    purge: async (before: Date | null, options: PurgeOptions = {}): Promise<PurgeCounts> => {
      const sources = purgeSources(before, options);
      const purged: PurgeCounts = { calls: 0, receipts: 0 };
      const p = params(before, options, sources);
      const progress = () => options.onProgress?.({ ...purged });
      const ids = (going: (string | number)[]) => ({ ids: JSON.stringify(going) });
      if (sources) {
        const { last } = (p.cutoff === null ? stmts.lastAnyCall.get() : stmts.lastCall.get(p)) as {
          last: number | null;
        };
        await walk(
          last,
          stmts.testCalls,
          p,
          (going) => {
            purged.receipts += stmts.deleteCallReceipts.run(ids(going)).changes;
            purged.calls += stmts.deleteCalls.run(ids(going)).changes;
          },
          progress,
          options,
        );
        return purged;
      }
      const { last: lastCall } = stmts.lastCall.get(p) as { last: number | null };
      await walk(
        lastCall,
        stmts.calls,
        p,
        (going) => (purged.calls += stmts.deleteCalls.run(ids(going)).changes),
        progress,
        options,
      );
      const { last: lastReceipt } = stmts.lastReceipt.get(p) as { last: number | null };
      await walk(
        lastReceipt,
        stmts.receipts,
        p,
        (going) => (purged.receipts += stmts.deleteReceipts.run(ids(going)).changes),
        progress,
        options,
      );
      return purged;
    },
  };
}
