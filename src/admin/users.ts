import { CallhookError } from '../errors.js';
import { newId } from '../ids.js';
import { type AuditLog, audited } from '../operators/audit.js';
import { hashPassword, newSecret, passwordProblem, TOKEN_PREFIX } from '../operators/credentials.js';
import { type Actor, isRole, ROLES, type Role } from '../operators/roles.js';
import type { OperatorStore, TokenRecord, UserRecord } from '../store/operators.js';

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

export interface UsersDeps {
  store: Pick<
    OperatorStore,
    | 'addUser'
    | 'findUser'
    | 'listUsers'
    | 'setRole'
    | 'removeUser'
    | 'setPassword'
    | 'addPasswordLink'
    | 'addToken'
    | 'listTokens'
    | 'revokeToken'
  >;
  audit: AuditLog;
  /**
   * Whether an admin token is configured (CALLHOOK_ADMIN_TOKEN or `admin_token`): then it can stand in for the last
   * admin user, who may go. One callhook generated and keeps in its data dir does not count: nobody is meant to read it.
   */
  adminTokenConfigured: boolean;
  now?: () => Date;
}

/** docs/reference.md#operators: a one-time link works for a day. */
export const LINK_VALID_MS = 24 * 60 * 60_000;
/** RFC 5321 section 4.5.3.1.3: a path holds at most 256 octets, an address within it 254. */
const MAX_EMAIL = 254;
/** `local@domain.tld`: no spaces, one @, a dot in the domain. Whether it reaches anyone is the admin's to know. */
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const MAX_TOKEN_NAME = 100;

/** An address as it is kept and matched: trimmed, lower-cased (operators.ts). */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The address, normalised, or a 400 saying why it cannot be one. */
export function checkedEmail(given: string): string {
  const email = normalEmail(given);
  if (email.length > MAX_EMAIL) throw new CallhookError('BAD_REQUEST', `email: at most ${MAX_EMAIL} characters`);
  if (!EMAIL.test(email))
    throw new CallhookError('BAD_REQUEST', `email: ${JSON.stringify(email)} is not an address (name@example.com)`);
  return email;
}

export function checkedRole(given: string): Role {
  if (!isRole(given))
    throw new CallhookError('BAD_REQUEST', `role: ${JSON.stringify(given)} is no role (roles: ${ROLES.join(', ')})`);
  return given;
}

/**
 * The user operations (docs/reference.md#operators), on the store, each change kept in the audit log under the user's
 * address with what else is worth knowing (a role, a token's name and id), never a password, a token, a link or a
 * digest of one. Everything given is checked before anything is written: a refusal changes nothing.
 */
export function userOperations({
  store,
  audit,
  adminTokenConfigured,
  now = () => new Date(),
}: UsersDeps): UserOperations {
  const keepAdmin = !adminTokenConfigured;
  const lastAdmin = (email: string, doing: string) =>
    new CallhookError(
      'CONFLICT',
      `${doing} ${email} would leave no admin: set CALLHOOK_ADMIN_TOKEN first (or make another user admin)`,
    );
  const userOr404 = async (email: string) => {
    const user = await store.findUser(email);
    if (!user) throw new CallhookError('NOT_FOUND', `no user ${email}`);
    return user;
  };
  const view = async (user: UserRecord) => userView(user, await store.listTokens(user.id));
  /** A link for the user to set their password, kept as its digest: the secret is in the URL, shown once. */
  const newLink = async (userId: string, origin: string): Promise<PasswordLink> => {
    const at = now();
    const { secret, digest } = newSecret();
    const expiresAt = new Date(at.getTime() + LINK_VALID_MS).toISOString();
    await store.addPasswordLink({ digest, userId, at: at.toISOString(), expiresAt });
    return { url: `${origin.replace(/\/+$/, '')}/ui/password/${secret}`, expires_at: expiresAt };
  };
  // What a refused request is kept under: the address as given, within the length of one, as typed it may be none.
  const targetOf = (email: string) => normalEmail(email).slice(0, MAX_EMAIL);

  return {
    async list() {
      const [users, tokens] = await Promise.all([store.listUsers(), store.listTokens()]);
      return users.map((user) => userView(user, tokens));
    },

    add: (by, input, origin) =>
      audited(
        audit,
        by,
        'user.add',
        targetOf(input.email),
        async () => {
          const email = checkedEmail(input.email);
          const role = checkedRole(input.role);
          const problem = input.password === undefined ? undefined : passwordProblem(input.password);
          if (problem !== undefined) throw new CallhookError('BAD_REQUEST', `password: ${problem}`);
          const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
          const id = newId();
          const added = await store.addUser({ id, email, role, passwordHash, at: now().toISOString() });
          if (!added) throw new CallhookError('CONFLICT', `a user ${email} exists already`);
          const link = passwordHash === null ? await newLink(id, origin) : undefined;
          return { user: await view((await store.findUser(email))!), ...(link ? { link } : {}) };
        },
        ({ user, link }) => ({ role: user.role, password: link ? 'link' : 'set' }),
      ),

    setRole: (by, given, roleName) =>
      audited(
        audit,
        by,
        'user.role',
        targetOf(given),
        async () => {
          const role = checkedRole(roleName);
          const email = normalEmail(given);
          const user = await userOr404(email);
          const outcome = await store.setRole(user.id, role, now().toISOString(), keepAdmin);
          if (outcome === 'missing') throw new CallhookError('NOT_FOUND', `no user ${email}`);
          if (outcome === 'last-admin') throw lastAdmin(email, `making ${role} of`);
          return { from: user.role, user: await view((await store.findUser(email))!) };
        },
        ({ from, user }) => ({ from, role: user.role }),
      ).then(({ user }) => user),

    remove: (by, given) =>
      audited(
        audit,
        by,
        'user.remove',
        targetOf(given),
        async () => {
          const email = normalEmail(given);
          const user = await userOr404(email);
          const outcome = await store.removeUser(user.id, keepAdmin);
          if (outcome === 'missing') throw new CallhookError('NOT_FOUND', `no user ${email}`);
          if (outcome === 'last-admin') throw lastAdmin(email, 'removing');
          return user.role;
        },
        (role) => ({ role }),
      ).then(() => undefined),

    reset: (by, given, origin) =>
      audited(audit, by, 'user.reset', targetOf(given), async () => {
        const email = normalEmail(given);
        const user = await userOr404(email);
        if (!(await store.setPassword(user.id, null, now().toISOString())))
          throw new CallhookError('NOT_FOUND', `no user ${email}`);
        const link = await newLink(user.id, origin);
        return { user: await view((await store.findUser(email))!), link };
      }),

    addToken: (by, given, givenName) =>
      audited(
        audit,
        by,
        'token.add',
        targetOf(given),
        async () => {
          const at = now();
          const name = (givenName ?? `token-${at.toISOString().slice(0, 10)}`).trim();
          if (name === '' || name.length > MAX_TOKEN_NAME || /[\p{Cc}]/u.test(name))
            throw new CallhookError(
              'BAD_REQUEST',
              `name: a token's name is 1 to ${MAX_TOKEN_NAME} characters, none a control character`,
            );
          const user = await userOr404(normalEmail(given));
          const { secret, digest } = newSecret(TOKEN_PREFIX);
          const id = newId(at.getTime());
          await store.addToken({ id, userId: user.id, name, digest, at: at.toISOString() });
          const info: TokenView = { id, name, created_at: at.toISOString(), last_used_at: null };
          return { token: secret, info };
        },
        ({ info }) => ({ id: info.id, name: info.name }),
      ),

    async revokeToken(by, id) {
      // Kept under its user's address, as the token was made; a token that is not there is kept under its id.
      const token = (await store.listTokens()).find((t) => t.id === id);
      const user = token && (await store.listUsers()).find((u) => u.id === token.userId);
      await audited(
        audit,
        by,
        'token.revoke',
        user?.email ?? id,
        async () => {
          if (!token || !(await store.revokeToken(id))) throw new CallhookError('NOT_FOUND', `no token ${id}`);
        },
        () => ({ id, name: token?.name }),
      );
    },
  };
}
