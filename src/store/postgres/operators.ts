import type pg from 'pg';
import type { Role } from '../../operators/roles.js';
import type {
  AuditEntry,
  AuditQuery,
  LinkOutcome,
  OperatorStore,
  TokenRecord,
  UserChange,
  UserRecord,
} from '../operators.js';
import { inTransaction, pgText } from './client.js';

/**
 * The PostgreSQL store's operators (store/operators.ts), shared by every replica: a session ended, a role changed or a
 * user removed through one is gone for the next request to any other, each being one committed statement or
 * transaction. A one-time link is used by one conditional UPDATE, which a second use, from any replica, waits for and
 * then finds used. Changes that could take the last admin away queue on a transaction lock of their own, so two
 * replicas demoting the last two admins at once cannot both succeed.
 */

interface UserRow {
  id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  created_at: Date;
  updated_at: Date;
}

interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

interface AuditRow {
  id: number;
  at: Date;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  outcome: string;
  details: Record<string, unknown> | null;
}

const USER_COLUMNS = 'u.id, u.email, u.role, u.password_hash, u.created_at, u.updated_at';

const userOf = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  hasPassword: row.password_hash !== null,
});

const tokenOf = (row: TokenRow): TokenRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

const auditOf = (row: AuditRow): AuditEntry => ({ ...row, at: row.at.toISOString() });

/** The audit log's filters, each a fixed fragment around its placeholder, joined as a query has them. */
const AUDIT_FILTERS: Record<keyof Omit<AuditQuery, 'limit'>, (p: string) => string> = {
  actor: (p) => `actor = ${p}`,
  action: (p) => `action = ${p}`,
  target: (p) => `target = ${p}`,
  from: (p) => `at >= ${p}::timestamptz`,
  to: (p) => `at < ${p}::timestamptz`,
  before: (p) => `id < ${p}`,
};

/** A page of the audit log when the query says nothing of its length. */
const AUDIT_PAGE = 50;

/** PostgreSQL's jsonb cannot hold U+0000 either: every string in an entry's details is kept escaped (client.ts). */
const detailsJson = (details: Record<string, unknown> | null) =>
  details === null ? null : JSON.stringify(details, (_, value) => (typeof value === 'string' ? pgText(value) : value));

/** Held to the end of a transaction that may take an admin role away: such changes go one at a time. */
const USERS_LOCK = `SELECT pg_advisory_xact_lock(hashtext('callhook.users.' || current_schema()))`;

const LINK_OUTCOME = `SELECT CASE WHEN used_at IS NOT NULL THEN 'used' WHEN expires_at <= $2 THEN 'expired' END AS outcome,
  user_id FROM password_links WHERE digest = $1`;

export function postgresOperators(pool: pg.Pool): OperatorStore {
  const userById = async (client: pg.Pool | pg.ClientBase, id: string) =>
    (await client.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = $1`, [pgText(id)])).rows[0];

  /**
   * The user locked for the change, or why not: whether taking their admin role away leaves no admin user when one
   * must remain, read under the users' lock.
   */
  const changing = (userId: string, keepAdmin: boolean, change: (client: pg.PoolClient) => Promise<void>) =>
    inTransaction(pool, async (client): Promise<UserChange> => {
      await client.query(USERS_LOCK);
      const user = await userById(client, userId);
      if (!user) return 'missing';
      if (keepAdmin && user.role === 'admin') {
        const { rows } = await client.query<{ n: number }>(`SELECT count(*) AS n FROM users WHERE role = 'admin'`);
        if (rows[0]!.n <= 1) return 'last-admin';
      }
      await change(client);
      return 'done';
    });

  return {
    addUser: async ({ id, email, role, passwordHash, at }) =>
      (
        await pool.query(
          `INSERT INTO users (id, email, role, password_hash, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
           ON CONFLICT (email) DO NOTHING`,
          [pgText(id), pgText(email), role, pgText(passwordHash ?? undefined), at],
        )
      ).rowCount === 1,

    findUser: async (email) => {
      const { rows } = await pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u WHERE u.email = $1`, [
        pgText(email),
      ]);
      const row = rows[0];
      return row && { ...userOf(row), passwordHash: row.password_hash };
    },

    listUsers: async () =>
      (await pool.query<UserRow>(`SELECT ${USER_COLUMNS} FROM users u ORDER BY u.created_at, u.id`)).rows.map(userOf),

    setRole: async (userId, role, at, keepAdmin) =>
      changing(userId, keepAdmin && role !== 'admin', async (client) => {
        await client.query('UPDATE users SET role = $2, updated_at = $3 WHERE id = $1', [userId, role, at]);
        await client.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
      }),

    // Tokens, sessions and links go with the user (ON DELETE CASCADE).
    removeUser: async (userId, keepAdmin) =>
      changing(userId, keepAdmin, async (client) => {
        await client.query('DELETE FROM users WHERE id = $1', [userId]);
      }),

    setPassword: async (userId, passwordHash, at) =>
      (
        await pool.query(
          `WITH changed AS (UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1 RETURNING id),
           ended AS (DELETE FROM sessions WHERE user_id IN (SELECT id FROM changed)),
           retired AS (UPDATE password_links SET used_at = $3
                       WHERE user_id IN (SELECT id FROM changed) AND used_at IS NULL)
           SELECT id FROM changed`,
          [pgText(userId), pgText(passwordHash ?? undefined), at],
        )
      ).rowCount === 1,

    addPasswordLink: async ({ digest, userId, at, expiresAt }) => {
      await pool.query('INSERT INTO password_links (digest, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
        pgText(digest),
        pgText(userId),
        at,
        expiresAt,
      ]);
    },

    checkPasswordLink: async (digest, at) => {
      const { rows } = await pool.query<{ outcome: 'used' | 'expired' | null; user_id: string }>(LINK_OUTCOME, [
        pgText(digest),
        at,
      ]);
      const link = rows[0];
      if (!link) return { outcome: 'missing' };
      if (link.outcome) return { outcome: link.outcome };
      const user = await userById(pool, link.user_id);
      return user ? { user: userOf(user) } : { outcome: 'missing' };
    },

    usePasswordLink: (digest, passwordHash, at) =>
      inTransaction(pool, async (client): Promise<{ outcome: LinkOutcome; user?: UserRecord }> => {
        // A concurrent use holds the row until it commits; this UPDATE then finds it used and changes nothing.
        const used = await client.query<{ user_id: string }>(
          `UPDATE password_links SET used_at = $2 WHERE digest = $1 AND used_at IS NULL AND expires_at > $2
           RETURNING user_id`,
          [pgText(digest), at],
        );
        const userId = used.rows[0]?.user_id;
        if (userId === undefined) {
          const { rows } = await client.query<{ outcome: 'used' | 'expired' | null }>(LINK_OUTCOME, [
            pgText(digest),
            at,
          ]);
          return { outcome: rows[0]?.outcome ?? 'missing' };
        }
        await client.query('UPDATE users SET password_hash = $2, updated_at = $3 WHERE id = $1', [
          userId,
          pgText(passwordHash),
          at,
        ]);
        await client.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
        await client.query('UPDATE password_links SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [
          userId,
          at,
        ]);
        return { outcome: 'set', user: userOf((await userById(client, userId))!) };
      }),

    addToken: async ({ id, userId, name, digest, at }) => {
      await pool.query('INSERT INTO tokens (id, user_id, name, digest, created_at) VALUES ($1, $2, $3, $4, $5)', [
        pgText(id),
        pgText(userId),
        pgText(name),
        pgText(digest),
        at,
      ]);
    },

    listTokens: async (userId) => {
      const { rows } = await pool.query<TokenRow>(
        userId === undefined
          ? 'SELECT * FROM tokens ORDER BY created_at, id'
          : 'SELECT * FROM tokens WHERE user_id = $1 ORDER BY created_at, id',
        userId === undefined ? [] : [pgText(userId)],
      );
      return rows.map(tokenOf);
    },

    findToken: async (digest) => {
      const { rows } = await pool.query<TokenRow & { user: UserRow & { created_at: string; updated_at: string } }>(
        `SELECT t.id, t.user_id, t.name, t.created_at, t.last_used_at, row_to_json(u) AS user
         FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = $1`,
        [pgText(digest)],
      );
      const row = rows[0];
      if (!row) return undefined;
      // row_to_json gives the user's times as text: read back as dates, they are what userOf takes.
      const user = {
        ...row.user,
        created_at: new Date(row.user.created_at),
        updated_at: new Date(row.user.updated_at),
      };
      return { token: tokenOf(row), user: userOf(user) };
    },

    touchToken: async (id, at) => {
      await pool.query('UPDATE tokens SET last_used_at = $2 WHERE id = $1', [pgText(id), at]);
    },

    revokeToken: async (id) => (await pool.query('DELETE FROM tokens WHERE id = $1', [pgText(id)])).rowCount === 1,

    // The expired go as new ones come: the table holds about the sessions alive, whoever never signs out.
    addSession: async ({ digest, userId, keyDigest, at, expiresAt }) => {
      await pool.query(
        `WITH expired AS (DELETE FROM sessions WHERE expires_at <= $4)
         INSERT INTO sessions (digest, user_id, key_digest, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
        [
          pgText(digest),
          userId === null ? null : pgText(userId),
          keyDigest === null ? null : pgText(keyDigest),
          at,
          expiresAt,
        ],
      );
    },

    findSession: async (digest, at) => {
      const { rows } = await pool.query<Partial<UserRow> & { key_digest: string | null; expires_at: Date }>(
        `SELECT s.key_digest, s.expires_at, ${USER_COLUMNS} FROM sessions s LEFT JOIN users u ON u.id = s.user_id
         WHERE s.digest = $1 AND s.expires_at > $2`,
        [pgText(digest), at],
      );
      const row = rows[0];
      if (!row) return undefined;
      return {
        user: row.id == null ? null : userOf(row as UserRow),
        keyDigest: row.key_digest,
        expiresAt: row.expires_at.toISOString(),
      };
    },

    endSession: async (digest) => {
      await pool.query('DELETE FROM sessions WHERE digest = $1', [pgText(digest)]);
    },

    // One statement for the lot; ORDINALITY keeps their order in their ids.
    appendAudit: async (entries) => {
      if (entries.length === 0) return;
      const column = <T>(pick: (entry: (typeof entries)[number]) => T) => entries.map(pick);
      const text = (value: string | null) => (value === null ? null : pgText(value));
      await pool.query(
        `INSERT INTO audit_log (at, actor, address, action, target, outcome, details)
         SELECT at, actor, address, action, target, outcome, details
         FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::jsonb[])
           WITH ORDINALITY AS e (at, actor, address, action, target, outcome, details, n)
         ORDER BY n`,
        [
          column((e) => e.at),
          column((e) => pgText(e.actor)),
          column((e) => text(e.address)),
          column((e) => pgText(e.action)),
          column((e) => text(e.target)),
          column((e) => pgText(e.outcome)),
          column((e) => detailsJson(e.details)),
        ],
      );
    },

    listAudit: async ({ limit = AUDIT_PAGE, ...query }) => {
      const values: unknown[] = [];
      const where = (Object.keys(AUDIT_FILTERS) as (keyof typeof AUDIT_FILTERS)[])
        .filter((key) => query[key] !== undefined)
        .map((key) => {
          const value = query[key]!;
          values.push(typeof value === 'string' ? pgText(value) : value);
          return AUDIT_FILTERS[key](`$${values.length}`);
        });
      values.push(limit);
      const { rows } = await pool.query<AuditRow>(
        `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${values.length}`,
        values,
      );
      return rows.map(auditOf);
    },

    expireAudit: async (before, limit) =>
      (
        await pool.query(
          'DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 ORDER BY at, id LIMIT $2)',
          [before, limit],
        )
      ).rowCount ?? 0,
  };
}
