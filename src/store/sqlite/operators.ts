import type Database from 'better-sqlite3';
import type { Role } from '../../operators/roles.js';
import type { AuditEntry, AuditQuery, OperatorStore, TokenRecord, UserChange, UserRecord } from '../operators.js';
import { BACKGROUND, inChunks } from './chunks.js';

/**
 * The SQLite store's operators (store/operators.ts): users, their links, tokens and sessions, and the audit log. Few
 * and small, read and written in place on the event loop's connection as the admin's edits are: a session is one
 * indexed read a dashboard request, a change one short transaction. Every connection on the file sees a commit at
 * once, so a session ended through one is gone for every other. Only retention.audit's deletes go a chunk at a time,
 * at the background pace (sqlite/chunks.ts).
 */

type Db = Database.Database;

interface UserRow {
  id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

interface AuditRow {
  id: number;
  at: string;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  outcome: string;
  details: string | null;
}

const USER_COLUMNS = 'u.id, u.email, u.role, u.password_hash, u.created_at, u.updated_at';
/** A token's columns beside its user's, the user's under names of their own. */
const TOKEN_AND_USER = `t.id, t.user_id, t.name, t.created_at, t.last_used_at, u.email AS u_email, u.role AS u_role,
  u.password_hash AS u_password_hash, u.created_at AS u_created_at, u.updated_at AS u_updated_at`;

export const userOf = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  role: row.role,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  hasPassword: row.password_hash !== null,
});

const tokenOf = (row: TokenRow): TokenRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

const auditOf = (row: AuditRow): AuditEntry => ({
  ...row,
  details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
});

/** The audit log's filters, each a fixed fragment with a named parameter, joined as a query has them. */
const AUDIT_FILTERS: Record<keyof Omit<AuditQuery, 'limit'>, string> = {
  actor: 'actor = @actor',
  action: 'action = @action',
  target: 'target = @target',
  from: 'at >= @from',
  to: 'at < @to',
  before: 'id < @before',
};

/** A page of the audit log when the query says nothing of its length. */
export const AUDIT_PAGE = 50;

export function sqliteOperators(db: Db): OperatorStore {
  const stmts = {
    addUser: db.prepare(`INSERT INTO users (id, email, role, password_hash, created_at, updated_at)
      VALUES (@id, @email, @role, @passwordHash, @at, @at) ON CONFLICT (email) DO NOTHING`),
    userByEmail: db.prepare(`SELECT ${USER_COLUMNS} FROM users u WHERE u.email = ?`),
    userById: db.prepare(`SELECT ${USER_COLUMNS} FROM users u WHERE u.id = ?`),
    users: db.prepare(`SELECT ${USER_COLUMNS} FROM users u ORDER BY u.created_at, u.id`),
    admins: db.prepare(`SELECT COUNT(*) FROM users WHERE role = 'admin'`).pluck(),
    setRole: db.prepare('UPDATE users SET role = ?, updated_at = ? WHERE id = ?'),
    setPassword: db.prepare('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?'),
    removeUser: db.prepare('DELETE FROM users WHERE id = ?'),
    endSessionsOf: db.prepare('DELETE FROM sessions WHERE user_id = ?'),

    addLink: db.prepare(`INSERT INTO password_links (digest, user_id, created_at, expires_at)
      VALUES (@digest, @userId, @at, @expiresAt)`),
    link: db.prepare('SELECT user_id, expires_at, used_at FROM password_links WHERE digest = ?'),
    useLink: db.prepare('UPDATE password_links SET used_at = ? WHERE digest = ?'),
    retireLinks: db.prepare('UPDATE password_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL'),

    addToken: db.prepare(`INSERT INTO tokens (id, user_id, name, digest, created_at)
      VALUES (@id, @userId, @name, @digest, @at)`),
    tokens: db.prepare('SELECT * FROM tokens ORDER BY created_at, id'),
    tokensOf: db.prepare('SELECT * FROM tokens WHERE user_id = ? ORDER BY created_at, id'),
    token: db.prepare(`SELECT ${TOKEN_AND_USER} FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = ?`),
    touchToken: db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?'),
    revokeToken: db.prepare('DELETE FROM tokens WHERE id = ?'),

    dropExpired: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
    addSession: db.prepare(`INSERT INTO sessions (digest, user_id, key_digest, created_at, expires_at)
      VALUES (@digest, @userId, @keyDigest, @at, @expiresAt)`),
    session: db.prepare(`SELECT s.key_digest, s.expires_at, ${USER_COLUMNS} FROM sessions s
      LEFT JOIN users u ON u.id = s.user_id WHERE s.digest = ? AND s.expires_at > ?`),
    endSession: db.prepare('DELETE FROM sessions WHERE digest = ?'),

    appendAudit: db.prepare(`INSERT INTO audit_log (at, actor, address, action, target, outcome, details)
      VALUES (@at, @actor, @address, @action, @target, @outcome, @details)`),
    expireAudit: db.prepare(
      'DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at, id LIMIT ?)',
    ),
  };

  const userRow = (id: string) => stmts.userById.get(id) as UserRow | undefined;
  /** Whether taking `user`'s admin role away leaves no admin user, when one must remain. */
  const lastAdmin = (user: UserRow, keepAdmin: boolean) =>
    keepAdmin && user.role === 'admin' && (stmts.admins.get() as number) <= 1;

  return {
    addUser: async (user) => stmts.addUser.run(user).changes > 0,

    findUser: async (email) => {
      const row = stmts.userByEmail.get(email) as UserRow | undefined;
      return row && { ...userOf(row), passwordHash: row.password_hash };
    },

    listUsers: async () => (stmts.users.all() as UserRow[]).map(userOf),

    setRole: async (userId, role, at, keepAdmin) =>
      db
        .transaction((): UserChange => {
          const user = userRow(userId);
          if (!user) return 'missing';
          if (role !== 'admin' && lastAdmin(user, keepAdmin)) return 'last-admin';
          stmts.setRole.run(role, at, userId);
          stmts.endSessionsOf.run(userId);
          return 'done';
        })
        .immediate(),

    // Tokens, sessions and links go with the user (ON DELETE CASCADE).
    removeUser: async (userId, keepAdmin) =>
      db
        .transaction((): UserChange => {
          const user = userRow(userId);
          if (!user) return 'missing';
          if (lastAdmin(user, keepAdmin)) return 'last-admin';
          stmts.removeUser.run(userId);
          return 'done';
        })
        .immediate(),

    setPassword: async (userId, passwordHash, at) =>
      db
        .transaction(() => {
          if (stmts.setPassword.run(passwordHash, at, userId).changes === 0) return false;
          stmts.endSessionsOf.run(userId);
          stmts.retireLinks.run(at, userId);
          return true;
        })
        .immediate(),

    addPasswordLink: async (link) => void stmts.addLink.run(link),

    checkPasswordLink: async (digest, at) => {
      const link = stmts.link.get(digest) as
        | { user_id: string; expires_at: string; used_at: string | null }
        | undefined;
      if (!link) return { outcome: 'missing' };
      if (link.used_at !== null) return { outcome: 'used' };
      if (link.expires_at <= at) return { outcome: 'expired' };
      const user = userRow(link.user_id);
      return user ? { user: userOf(user) } : { outcome: 'missing' };
    },

    // One write transaction: a second use, from this connection or another process's, waits for it and finds it used.
    usePasswordLink: async (digest, passwordHash, at) =>
      db
        .transaction(() => {
          const link = stmts.link.get(digest) as
            | { user_id: string; expires_at: string; used_at: string | null }
            | undefined;
          if (!link) return { outcome: 'missing' as const };
          if (link.used_at !== null) return { outcome: 'used' as const };
          if (link.expires_at <= at) return { outcome: 'expired' as const };
          stmts.useLink.run(at, digest);
          stmts.setPassword.run(passwordHash, at, link.user_id);
          stmts.endSessionsOf.run(link.user_id);
          stmts.retireLinks.run(at, link.user_id);
          return { outcome: 'set' as const, user: userOf(userRow(link.user_id)!) };
        })
        .immediate(),

    addToken: async (token) => void stmts.addToken.run(token),

    listTokens: async (userId) =>
      ((userId === undefined ? stmts.tokens.all() : stmts.tokensOf.all(userId)) as TokenRow[]).map(tokenOf),

    findToken: async (digest) => {
      const row = stmts.token.get(digest) as (TokenRow & Record<`u_${string}`, string | null>) | undefined;
      if (!row) return undefined;
      const user: UserRow = {
        id: row.user_id,
        email: row.u_email!,
        role: row.u_role as Role,
        password_hash: row.u_password_hash ?? null,
        created_at: row.u_created_at!,
        updated_at: row.u_updated_at!,
      };
      return { token: tokenOf(row), user: userOf(user) };
    },

    touchToken: async (id, at) => void stmts.touchToken.run(at, id),

    revokeToken: async (id) => stmts.revokeToken.run(id).changes > 0,

    // The expired go as new ones come: the table holds about the sessions alive, whoever never signs out.
    addSession: async (session) =>
      db
        .transaction(() => {
          stmts.dropExpired.run(session.at);
          stmts.addSession.run(session);
        })
        .immediate(),

    findSession: async (digest, at) => {
      const row = stmts.session.get(digest, at) as
        | (Partial<UserRow> & { key_digest: string | null; expires_at: string })
        | undefined;
      if (!row) return undefined;
      return {
        user: row.id == null ? null : userOf(row as UserRow),
        keyDigest: row.key_digest,
        expiresAt: row.expires_at,
      };
    },

    endSession: async (digest) => void stmts.endSession.run(digest),

    appendAudit: async (entries) =>
      db
        .transaction(() => {
          for (const entry of entries)
            stmts.appendAudit.run({
              ...entry,
              details: entry.details === null ? null : JSON.stringify(entry.details),
            });
        })
        .immediate(),

    listAudit: async ({ limit = AUDIT_PAGE, ...query }) => {
      const where = (Object.keys(AUDIT_FILTERS) as (keyof typeof AUDIT_FILTERS)[])
        .filter((key) => query[key] !== undefined)
        .map((key) => AUDIT_FILTERS[key]);
      const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT @limit`;
      return (db.prepare(sql).all({ ...query, limit }) as AuditRow[]).map(auditOf);
    },

    /** Up to `limit` entries, a background chunk at a time, the write lock left free between two. */
    expireAudit: async (before, limit) => {
      let deleted = 0;
      await inChunks(
        db,
        (rows) => {
          const take = Math.min(rows, limit - deleted);
          const changed = take > 0 ? stmts.expireAudit.run(before, take).changes : 0;
          deleted += changed;
          // A chunk short of `rows` ends them: the last old entry went, or the limit is reached.
          return take === rows ? changed : 0;
        },
        undefined,
        BACKGROUND,
      );
      return deleted;
    },
  };
}
