import type { Actor, Role } from '../operators/roles.js';
import type { TokenRecord, UserRecord } from '../store/operators.js';

/**
 * The people who run callhook, managed by an admin (docs/reference.md#operators): through the admin API
 * (`/admin/users`), the CLI (`callhook users …`, through it) and the dashboard (`/ui/users`), all three through these
 * operations, which check what they are given and keep each change in the audit log.
 */

export interface UserView {
  email: string;
  role: Role;
  created_at: string;
  updated_at: string;
  /** false until the user has set a password through their link. */
  password_set: boolean;
  tokens: TokenView[];
}

export interface TokenView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** A one-time link to set a password: its URL and when it stops working. */
export interface PasswordLink {
  url: string;
  expires_at: string;
}

export interface UserOperations {
  list(): Promise<UserView[]>;
  /**
   * Adds a user with a role and either a password (at least 12 characters) or, without one, a one-time link to set it
   * (valid 24 hours), made from `origin` (the config's public_url, or the address the request came to).
   */
  add(
    by: Actor,
    input: { email: string; role: string; password?: string },
    origin: string,
  ): Promise<{ user: UserView; link?: PasswordLink }>;
  /** A new role; the user's sessions end on every replica. */
  setRole(by: Actor, email: string, role: string): Promise<UserView>;
  /** Removes the user, their tokens and sessions. The last admin user stays while no admin token is configured. */
  remove(by: Actor, email: string): Promise<void>;
  /** Clears the user's password, ends their sessions and makes a new one-time link. */
  reset(by: Actor, email: string, origin: string): Promise<{ user: UserView; link: PasswordLink }>;
  /** A personal token with the user's role, shown this once. */
  addToken(by: Actor, email: string, name: string | undefined): Promise<{ token: string; info: TokenView }>;
  revokeToken(by: Actor, id: string): Promise<void>;
}

export function userView(user: UserRecord, tokens: readonly TokenRecord[]): UserView {
  return {
    email: user.email,
    role: user.role,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
    password_set: user.hasPassword,
    tokens: tokens.filter((t) => t.userId === user.id).map(tokenView),
  };
}

export function tokenView(token: TokenRecord): TokenView {
  return { id: token.id, name: token.name, created_at: token.createdAt, last_used_at: token.lastUsedAt };
}
