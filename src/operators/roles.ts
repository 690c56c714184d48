/**
 * Who may do what (docs/reference.md#operators). Three roles, each allowed what the one below it is and more: a
 * `viewer` reads every page and GET of the admin API; an `operator` also changes calls, deliveries, refused requests,
 * sinks and incidents; an `admin` also manages users and tokens, erases and reads the audit log. The admin token acts
 * as an admin named `admin-token`.
 */

export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether `role` may do what `needed` may. */
export function allows(role: Role, needed: Role): boolean {
  return RANK[role] >= RANK[needed];
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** The name the admin token acts under, in the audit log, an edit, an acknowledgement, an erasure. */
export const ADMIN_TOKEN_ACTOR = 'admin-token';

/**
 * Who made a request, as its authentication found them: the admin token, a user's personal token or a dashboard
 * session. `name` is what the audit log and every change keep (the user's address, or `admin-token`); `address` is the
 * client's (client-address.ts), kept with what they did.
 */
export interface Actor {
  name: string;
  role: Role;
  /** The user's id; absent for the admin token. */
  userId?: string;
  /** How they signed in: the admin token, a personal token, or a dashboard session (of either). */
  via: 'admin-token' | 'token' | 'session';
  address: string;
}
