import type { Role } from '../operators/roles.js';

/**
 * What the store keeps of the people who run callhook (docs/reference.md#operators): users with their role and
 * password hash, their personal tokens, the one-time links that set a password, the dashboard's sessions, and the
 * audit log. Tokens, sessions and links are kept as digests of their secret (operators/credentials.ts), never the
 * secret. Every change that must end a user's sessions (a new role, a new password, a removal) ends them in its own
 * transaction, so the next request to any replica finds no session.
 */

export interface UserRecord {
  id: string;
  /** Trimmed and lower-cased: an address is matched without regard to case. */
  email: string;
  role: Role;
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
  /** Whether a password is set (a user added with a link has none until the link is used). */
  hasPassword: boolean;
}

export interface NewUser {
  id: string;
  email: string;
  role: Role;
  /** A scrypt hash, or null when the user will set one through a link. */
  passwordHash: string | null;
  at: string;
}

export interface TokenRecord {
  id: string;
  userId: string;
  name: string;
  createdAt: string;
  /** When it last opened a request; null when never. */
  lastUsedAt: string | null;
}

export interface NewToken {
  id: string;
  userId: string;
  name: string;
  /** secretDigest of the token. */
  digest: string;
  at: string;
}

export interface NewSession {
  /** secretDigest of the cookie's value. */
  digest: string;
  /** The user's id; null for a session begun with the admin token. */
  userId: string | null;
  /**
   * For an admin-token session, the digest of the admin token it was begun with: a rotated token ends the sessions
   * it began. Null for a user's session.
   */
  keyDigest: string | null;
  at: string;
  /** ISO 8601: the session ends then, whatever the cookie says. */
  expiresAt: string;
}

/** A live session: not ended, not past its end. A user's carries the user as they are now. */
export interface SessionRecord {
  user: UserRecord | null;
  keyDigest: string | null;
  expiresAt: string;
}

export type LinkOutcome = 'set' | 'used' | 'expired' | 'missing';

/** What stops a change to the users: the last admin user may not go while the admin token cannot stand in. */
export type UserChange = 'done' | 'missing' | 'last-admin';

export interface AuditInput {
  /** ISO 8601. */
  at: string;
  /** A user's address, `admin-token`, or for a failed sign-in the address that was tried. */
  actor: string;
  /** The client's address. */
  address: string | null;
  /** What was done: `call.edit`, `sink.pause`, `user.add`, `sign-in` … (docs/reference.md#audit-log). */
  action: string;
  /** What it touched: a call's id, a sink's name, a user's address; null when nothing in particular. */
  target: string | null;
  /** `ok`, or the error code it ended with (`NOT_FOUND`, `FORBIDDEN`, `UNAUTHORIZED` …). */
  outcome: string;
  /** What else is worth keeping: the names of the fields an edit changed, a count, an erasure's hash. Never a value. */
  details: Record<string, unknown> | null;
}

export interface AuditEntry extends AuditInput {
  /** Increasing: newer entries have larger ids. */
  id: number;
}

export interface AuditQuery {
  actor?: string;
  action?: string;
  target?: string;
  /** ISO 8601, inclusive. */
  from?: string;
  /** ISO 8601, exclusive. */
  to?: string;
  limit?: number;
  /** Entries older than this id (the list is newest first). */
  before?: number;
}

export interface OperatorStore {
  /** false when a user with that address exists already. */
  addUser(user: NewUser): Promise<boolean>;
  /** The user and their password hash, by address (trimmed, lower-cased by the caller). */
  findUser(email: string): Promise<(UserRecord & { passwordHash: string | null }) | undefined>;
  /** Oldest first. */
  listUsers(): Promise<UserRecord[]>;
  /**
   * Gives the user a new role and ends their sessions. `last-admin` (nothing changed) when they are the last admin
   * user, the role is not admin, and `keepAdmin` says an admin must remain.
   */
  setRole(userId: string, role: Role, at: string, keepAdmin: boolean): Promise<UserChange>;
  /**
   * Removes the user with their tokens, sessions and links. `last-admin` (nothing changed) as for setRole.
   */
  removeUser(userId: string, keepAdmin: boolean): Promise<UserChange>;
  /**
   * Sets (or, with null, clears) the user's password, ends their sessions and retires their unused links (a reset's
   * new link is made after); false when there is no such user.
   */
  setPassword(userId: string, passwordHash: string | null, at: string): Promise<boolean>;

  /** Keeps a one-time link to set the user's password, valid until `expiresAt`. */
  addPasswordLink(link: { digest: string; userId: string; at: string; expiresAt: string }): Promise<void>;
  /** The link's user when it can still be used at `at`, else why not. */
  checkPasswordLink(
    digest: string,
    at: string,
  ): Promise<{ user: UserRecord } | { outcome: Exclude<LinkOutcome, 'set'> }>;
  /**
   * Uses the link once: sets the password, marks the link used (and the user's other links), ends the user's sessions, in one transaction. A second
   * use, from any replica, finds it `used`.
   */
  usePasswordLink(
    digest: string,
    passwordHash: string,
    at: string,
  ): Promise<{ outcome: LinkOutcome; user?: UserRecord }>;

  addToken(token: NewToken): Promise<void>;
  /** A user's tokens, or every user's; oldest first. */
  listTokens(userId?: string): Promise<TokenRecord[]>;
  /** The token with this digest and its user as they are now; undefined when revoked or the user removed. */
  findToken(digest: string): Promise<{ token: TokenRecord; user: UserRecord } | undefined>;
  /** Records a use of the token at `at`. */
  touchToken(id: string, at: string): Promise<void>;
  /** false when there is no such token. */
  revokeToken(id: string): Promise<boolean>;

  addSession(session: NewSession): Promise<void>;
  /** The live session with this digest at `at`, or undefined (ended, expired, its user removed). */
  findSession(digest: string, at: string): Promise<SessionRecord | undefined>;
  endSession(digest: string): Promise<void>;

  /** Appends entries to the audit log. Nothing in callhook changes or deletes one, but retention.audit. */
  appendAudit(entries: readonly AuditInput[]): Promise<void>;
  /** Newest first. */
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;
  /** Deletes up to `limit` entries older than `before` (ISO), oldest first: retention.audit. How many went. */
  expireAudit(before: string, limit: number): Promise<number>;
}
