import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { callWithout, droppedRaw, type StoredBody } from '../../privacy/retain-call.js';
import {
  type CallsMark,
  callsPass,
  markKey,
  parseMark,
  type ReceiptsRetained,
  type RetentionOptions,
  type RetentionStore,
} from '../retention.js';
import { BACKGROUND, inChunks } from './chunks.js';

/**
 * The retention on SQLite (store/retention.ts says what each method does). Every chunk is a transaction of its own on
 * the store's connection, at the background pace (sqlite/chunks.ts BACKGROUND): it reads its rows, rewrites them in
 * JavaScript (the same functions as PostgreSQL's, privacy/retain-call.ts) and writes them under one write lock, so an
 * edit or a commit never falls between the read and the write.
 */

/**
 * A truncating checkpoint is tried this often, this long apart, before it gives up until the next pass: each try
 * returns at once when a reader or the writer is in the way (no busy wait on the event loop, sqlite/chunks.ts).
 */
const CHECKPOINT_TRIES = 50;
const CHECKPOINT_AGAIN_MS = 10;

interface CallRow {
  at: number;
  id: string;
  received_at: string;
  record: string;
  raw: string;
  dedup_key: string | null;
}

interface ReceiptRow {
  id: number;
  received_at: string;
  refused: number;
  kept: number;
}

/** The receipts' mark: every receipt up to this id (in commit order, SQLite having one writer) was done. */
interface ReceiptsMark {
  after: number;
}

export function sqliteRetention(db: Database.Database, busyTimeoutMs: number): RetentionStore {
  const stmts = {
    mark: db.prepare('SELECT value FROM meta WHERE key = ?').pluck(),
    setMark: db.prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    // In (received_at, rowid) order, the order of the calls_received index: each chunk starts where the last ended.
    byAge: db.prepare(`SELECT rowid AS at, id, received_at, record, raw, dedup_key FROM calls
      WHERE received_at >= @afterAt AND received_at < @before AND NOT (received_at = @afterAt AND rowid <= @afterRow)
      ORDER BY received_at, rowid LIMIT @limit`),
    byId: db.prepare(`SELECT rowid AS at, id, received_at, record, raw, dedup_key FROM calls
      WHERE id > @after AND id <= @top AND received_at < @before ORDER BY id LIMIT @limit`),
    setRaw: db.prepare('UPDATE calls SET raw = ? WHERE id = ?'),
    setCall: db.prepare(`UPDATE calls SET record = coalesce(@record, record), raw = coalesce(@raw, raw),
      dedup_key = coalesce(@dedupKey, dedup_key) WHERE id = @id`),
    edits: db.prepare('SELECT id, call_id, entry FROM call_edits WHERE call_id IN (SELECT value FROM json_each(?))'),
    setEdit: db.prepare('UPDATE call_edits SET entry = ? WHERE id = ?'),
    bodies: db.prepare(`SELECT id, call_id, content_type AS contentType, raw_body AS rawBody, query FROM receipts
      WHERE call_id IN (SELECT value FROM json_each(?)) AND (raw_body IS NOT NULL OR query IS NOT NULL)`),
    setBody: db.prepare('UPDATE receipts SET raw_body = ?, query = ? WHERE id = ?'),
    receipts: db.prepare(`SELECT id, received_at, outcome = 'rejected' AND ingested_as IS NULL AS refused,
      raw_body IS NOT NULL OR query IS NOT NULL AS kept FROM receipts WHERE id > ? ORDER BY id LIMIT ?`),
    deleteRefused: db.prepare("DELETE FROM receipts WHERE id = ? AND outcome = 'rejected' AND ingested_as IS NULL"),
    dropBody: db.prepare('UPDATE receipts SET raw_body = NULL, query = NULL WHERE id = ?'),
  };
  const markOf = <T extends object>(kind: string, keys: readonly (keyof T)[]) =>
    parseMark<T>(stmts.mark.get(markKey(kind)) as string | undefined, keys);

  /**
   * One pass of a kind over the calls (store/retention.ts callsPass): those that aged past the cutoff, then those
   * committed since with an older received time; `change` rewrites a chunk's rows and says how many it changed.
   */
  const walkCalls = async (
    kind: string,
    before: Date,
    { now = new Date(), signal }: RetentionOptions,
    change: (rows: CallRow[]) => number,
  ) => {
    const pass = callsPass(markOf<CallsMark>(kind, ['through', 'seen']), before, now);
    let changed = 0;
    let afterAt = pass.byAge.from;
    let afterRow = 0;
    await inChunks(
      db,
      (limit) => {
        if (signal?.aborted) return 0;
        const rows = stmts.byAge.all({ afterAt, afterRow, before: pass.byAge.before, limit }) as CallRow[];
        changed += change(rows);
        const last = rows.at(-1);
        if (last) ({ received_at: afterAt, at: afterRow } = last);
        return rows.length;
      },
      undefined,
      BACKGROUND,
    );
    let after = pass.byId.after;
    await inChunks(
      db,
      (limit) => {
        if (signal?.aborted) return 0;
        const rows = stmts.byId.all({ ...pass.byId, after, limit }) as CallRow[];
        changed += change(rows);
        after = rows.at(-1)?.id ?? after;
        return rows.length;
      },
      undefined,
      BACKGROUND,
    );
    if (!signal?.aborted) stmts.setMark.run(markKey(kind), JSON.stringify(pass.next));
    return changed;
  };

  /** Rows of a chunk's calls, by call id. */
  const byCall = <T extends { call_id: string }>(rows: T[]) => {
    const grouped = new Map<string, T[]>();
    for (const row of rows) grouped.set(row.call_id, [...(grouped.get(row.call_id) ?? []), row]);
    return grouped;
  };

  return {
    dropRawRequests: (before, options = {}) => {
      const at = (options.now ?? new Date()).toISOString();
      return walkCalls('raw', before, options, (rows) => {
        let changed = 0;
        for (const row of rows) {
          const raw = droppedRaw(row.raw, at);
          if (raw !== undefined) changed += stmts.setRaw.run(raw, row.id).changes;
        }
        return changed;
      });
    },

    removeField: (field, before, options = {}) => {
      const at = (options.now ?? new Date()).toISOString();
      return walkCalls(`field:${field}`, before, options, (rows) => {
        const ids = JSON.stringify(rows.map((row) => row.id));
        const edits = byCall(stmts.edits.all(ids) as { id: number; call_id: string; entry: string }[]);
        const bodies = byCall(stmts.bodies.all(ids) as (StoredBody & { call_id: string })[]);
        let changed = 0;
        for (const row of rows) {
          const changes = callWithout(
            field,
            {
              id: row.id,
              record: row.record,
              raw: row.raw,
              dedupKey: row.dedup_key,
              edits: edits.get(row.id) ?? [],
              receipts: bodies.get(row.id) ?? [],
            },
            at,
          );
          if (changes === undefined) continue;
          const { record = null, raw = null, dedupKey = null } = changes;
          stmts.setCall.run({ id: row.id, record, raw, dedupKey });
          for (const edit of changes.edits) stmts.setEdit.run(edit.entry, edit.id);
          for (const body of changes.receipts) stmts.setBody.run(body.rawBody, body.query, body.id);
          changed++;
        }
        return changed;
      });
    },

    /**
     * Walks the receipts in id order from its mark up to the first one not yet old enough: receipts are written as
     * their requests arrive, so the ones after it are younger too (but a reconcile run's, which hold no body and
     * refuse nothing). The mark stays on a receipt that is still there: an id freed by a delete at the end of the
     * table is given again to the next receipt, which must not be taken as done.
     */
    dropReceipts: async (before, { signal } = {}) => {
      const cutoff = before.toISOString();
      const counts: ReceiptsRetained = { bodies: 0, refused: 0 };
      let after = markOf<ReceiptsMark>('receipts', ['after'])?.after ?? 0;
      let kept = after;
      await inChunks(
        db,
        (limit) => {
          if (signal?.aborted) return 0;
          const rows = stmts.receipts.all(after, limit) as ReceiptRow[];
          for (const [looked, row] of rows.entries()) {
            if (row.received_at >= cutoff) return looked;
            if (row.refused) counts.refused += stmts.deleteRefused.run(row.id).changes;
            else {
              if (row.kept) counts.bodies += stmts.dropBody.run(row.id).changes;
              kept = row.id;
            }
            after = row.id;
          }
          return rows.length;
        },
        undefined,
        BACKGROUND,
      );
      stmts.setMark.run(markKey('receipts'), JSON.stringify({ after: kept } satisfies ReceiptsMark));
      return counts;
    },

    /**
     * docs/reference.md#retention: tried without waiting, so neither a reader in the middle of a long query (the reader
     * thread's) nor the writer's commits hold up the event loop; once it runs, the writer waits for it, as long as it
     * takes to copy what the last autocheckpoint left.
     */
    truncateLog: async () => {
      if (db.memory) return true;
      for (let tries = 1; ; tries++) {
        db.pragma('busy_timeout = 0');
        let busy: number;
        try {
          [{ busy }] = db.pragma('wal_checkpoint(TRUNCATE)') as [{ busy: number }];
        } finally {
          db.pragma(`busy_timeout = ${busyTimeoutMs}`);
        }
        if (busy === 0) return true;
        if (tries === CHECKPOINT_TRIES) return false;
        await sleep(CHECKPOINT_AGAIN_MS);
      }
    },
  };
}
