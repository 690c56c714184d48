import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { ErasedPerson, ErasureEntry, PersonMatch, PrivacyStore } from '../privacy.js';
import { inTransaction, pgText } from './client.js';

/**
 * The PostgreSQL store's side of a person's access and erasure (store/privacy.ts): the person is looked for by a
 * regular expression or a substring over every call, edit and kept body, and erased in one transaction. The rows are
 * deleted; what PostgreSQL may still hold of them (dead tuples until vacuumed, WAL archives, backups) is said in
 * docs/reference.md#erasure.
 */

const ERASURE_KEY = 'erasure-key';

/** The SQL that holds a person in `column` (text), with the request's value as `$1`. */
function holds(match: PersonMatch, column: string): string {
  return match.kind === 'phone' ? `${column} ~ $1` : `strpos(lower(${column}), $1) > 0`;
}

const value = (match: PersonMatch) => (match.kind === 'phone' ? match.pattern : match.value.toLowerCase());

/** A kept body as text whatever its bytes: ASCII as it is, the rest escaped (a number's digits are ASCII). */
const BODY = `encode(raw_body, 'escape')`;

export function postgresPrivacy(pool: pg.Pool): PrivacyStore {
  const find = async (client: pg.Pool | pg.PoolClient, match: PersonMatch) => {
    const { rows: calls } = await client.query<{ id: string }>(
      `SELECT id FROM calls WHERE ${holds(match, 'record::text')} OR ${holds(match, 'raw::text')}
         OR EXISTS (SELECT 1 FROM call_edits e WHERE e.call_id = calls.id AND ${holds(match, 'e.entry::text')})
       ORDER BY id`,
      [value(match)],
    );
    const callIds = calls.map((c) => c.id);
    const { rows: receipts } = await client.query<{ id: number; callId: string | null }>(
      `SELECT id, call_id AS "callId" FROM receipts
       WHERE (raw_body IS NOT NULL AND ${holds(match, BODY)}) OR (query IS NOT NULL AND ${holds(match, 'query')})
       ORDER BY id`,
      [value(match)],
    );
    const ofCalls = new Set(callIds);
    return { callIds, receiptIds: receipts.filter((r) => !ofCalls.has(r.callId ?? '')).map((r) => r.id) };
  };

  return {
    findPerson: (match) => find(pool, match),

    erasePerson: (match, { dryRun }) =>
      inTransaction(pool, async (client): Promise<ErasedPerson> => {
        const { callIds, receiptIds } = await find(client, match);
        const count = async (sql: string, values: unknown[]) =>
          (await client.query<{ n: number }>(sql, values)).rows[0]?.n ?? 0;
        const ofCalls = 'call_id = ANY($1::text[])';
        const receiptsOf = `${ofCalls} OR ingested_as = ANY($1::text[]) OR id = ANY($2::bigint[])`;
        const counts = {
          calls: await count('SELECT count(*)::int AS n FROM calls WHERE id = ANY($1::text[])', [callIds]),
          receipts: await count(`SELECT count(*)::int AS n FROM receipts WHERE ${receiptsOf}`, [callIds, receiptIds]),
          edits: await count(`SELECT count(*)::int AS n FROM call_edits WHERE ${ofCalls}`, [callIds]),
          deliveries: await count(`SELECT count(*)::int AS n FROM deliveries WHERE ${ofCalls}`, [callIds]),
          attempts: await count(
            `SELECT count(*)::int AS n FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE ${ofCalls})`,
            [callIds],
          ),
        };
        const { rows } = await client.query<{ sink: string; recordIds: string[] }>(
          `SELECT sink, array_agg(call_id ORDER BY call_id) AS "recordIds" FROM deliveries
           WHERE ${ofCalls} AND state IN ('done', 'in_flight') GROUP BY sink ORDER BY sink COLLATE "C"`,
          [callIds],
        );
        if (!dryRun) {
          await client.query(`DELETE FROM receipts WHERE ${receiptsOf}`, [callIds, receiptIds]);
          await client.query('DELETE FROM calls WHERE id = ANY($1::text[])', [callIds]);
        }
        return { counts, delivered: rows };
      }),

    async erasureKey() {
      await pool.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
        ERASURE_KEY,
        randomBytes(32).toString('hex'),
      ]);
      const { rows } = await pool.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [ERASURE_KEY]);
      return Buffer.from(rows[0]!.value, 'hex');
    },

    async recordErasure(entry) {
      await pool.query('INSERT INTO erasures (id, at, actor, kind, hash, counts) VALUES ($1, $2, $3, $4, $5, $6)', [
        entry.id,
        entry.at,
        pgText(entry.actor),
        entry.kind,
        entry.hash,
        JSON.stringify(entry.counts),
      ]);
    },

    async erasures(hash) {
      const { rows } = await pool.query<Omit<ErasureEntry, 'at'> & { at: Date }>(
        'SELECT id, at, actor, kind, hash, counts FROM erasures WHERE hash = $1 ORDER BY id',
        [hash],
      );
      return rows.map((row) => ({ ...row, at: row.at.toISOString() }));
    },
  };
}
