import { randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ErasedPerson, ErasureEntry, PersonMatch, PrivacyStore } from '../privacy.js';
import type { SqliteReader } from './reader.js';

/**
 * The SQLite store's side of a person's access and erasure (store/privacy.ts). The person is looked for on the reader's
 * thread, a scan of every call, edit and kept body; the erasure is one transaction on the event loop's connection, as
 * the admin's edits are. Every connection overwrites what it deletes (secure_delete, sqlite/writes.ts), and a
 * truncating checkpoint then empties the WAL of the pages written before.
 */

type Db = Database.Database;

const ERASURE_KEY = 'erasure-key';
/** How long an erasure waits for the checkpoint that empties the WAL, in tries a few milliseconds apart. */
const CHECKPOINT_TRIES = 50;

/** The SQL that holds a person in `column`, with the request's `@pattern` or `@email` bound. */
function holds(match: PersonMatch, column: string): string {
  return match.kind === 'phone'
    ? `callhook_matches(@pattern, ${column})`
    : `instr(callhook_lower(CAST(${column} AS TEXT)), @email) > 0`;
}

const params = (match: PersonMatch) =>
  match.kind === 'phone' ? { pattern: match.pattern } : { email: match.value.toLowerCase() };

export function sqlitePrivacy(db: Db, reader: SqliteReader): PrivacyStore {
  const find = async (match: PersonMatch) => {
    const calls = await reader.all<{ id: string }>(
      `SELECT id FROM calls WHERE ${holds(match, 'record')} OR ${holds(match, 'raw')}
         OR EXISTS (SELECT 1 FROM call_edits e WHERE e.call_id = calls.id AND ${holds(match, 'e.entry')})
       ORDER BY id`,
      params(match),
    );
    const callIds = calls.map((c) => c.id);
    const receipts = await reader.all<{ id: number; callId: string | null }>(
      `SELECT id, call_id AS callId FROM receipts
       WHERE (raw_body IS NOT NULL AND ${holds(match, 'raw_body')}) OR (query IS NOT NULL AND ${holds(match, 'query')})
       ORDER BY id`,
      params(match),
    );
    const ofCalls = new Set(callIds);
    return { callIds, receiptIds: receipts.filter((r) => !ofCalls.has(r.callId ?? '')).map((r) => r.id) };
  };

  const checkpoint = async () => {
    for (let i = 0; i < CHECKPOINT_TRIES; i++) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      if (result?.busy === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('store: the WAL could not be checkpointed after an erasure; it will be at the next checkpoint');
  };

  return {
    findPerson: find,

    async erasePerson(match, { dryRun }) {
      const { callIds, receiptIds } = await find(match);
      const ids = JSON.stringify(callIds);
      const receipts = JSON.stringify(receiptIds);
      const inCalls = 'IN (SELECT value FROM json_each(@ids))';
      const erased = db
        .transaction((): ErasedPerson => {
          const count = (sql: string) => (db.prepare(sql).pluck().get({ ids, receipts }) as number) ?? 0;
          const counts = {
            calls: count(`SELECT COUNT(*) FROM calls WHERE id ${inCalls}`),
            receipts: count(
              `SELECT COUNT(*) FROM receipts WHERE call_id ${inCalls} OR ingested_as ${inCalls}
                 OR id IN (SELECT value FROM json_each(@receipts))`,
            ),
            edits: count(`SELECT COUNT(*) FROM call_edits WHERE call_id ${inCalls}`),
            deliveries: count(`SELECT COUNT(*) FROM deliveries WHERE call_id ${inCalls}`),
            attempts: count(
              `SELECT COUNT(*) FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE call_id ${inCalls})`,
            ),
          };
          const rows = db
            .prepare(
              `SELECT sink, call_id AS callId FROM deliveries WHERE call_id ${inCalls} AND state IN ('done', 'in_flight')
               ORDER BY sink, call_id`,
            )
            .all({ ids }) as { sink: string; callId: string }[];
          const delivered = new Map<string, string[]>();
          for (const { sink, callId } of rows) delivered.set(sink, [...(delivered.get(sink) ?? []), callId]);
          if (!dryRun) {
            db.prepare(
              `DELETE FROM receipts WHERE call_id ${inCalls} OR ingested_as ${inCalls}
                 OR id IN (SELECT value FROM json_each(@receipts))`,
            ).run({ ids, receipts });
            // Deliveries, attempts and edits go with their call (ON DELETE CASCADE).
            db.prepare(`DELETE FROM calls WHERE id ${inCalls}`).run({ ids });
          }
          return { counts, delivered: [...delivered].map(([sink, recordIds]) => ({ sink, recordIds })) };
        })
        .immediate();
      if (!dryRun && (erased.counts.calls > 0 || erased.counts.receipts > 0) && !db.memory) await checkpoint();
      return erased;
    },

    async erasureKey() {
      db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(
        ERASURE_KEY,
        randomBytes(32).toString('hex'),
      );
      return Buffer.from(db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(ERASURE_KEY) as string, 'hex');
    },

    async recordErasure(entry) {
      db.prepare(
        'INSERT INTO erasures (id, at, actor, kind, hash, counts) VALUES (@id, @at, @actor, @kind, @hash, @counts)',
      ).run({ ...entry, counts: JSON.stringify(entry.counts) });
    },

    async erasures(hash) {
      const rows = db.prepare('SELECT * FROM erasures WHERE hash = ? ORDER BY id').all(hash) as (Omit<
        ErasureEntry,
        'counts'
      > & { counts: string })[];
      return rows.map((row) => ({ ...row, counts: JSON.parse(row.counts) as Record<string, unknown> }));
    },
  };
}
