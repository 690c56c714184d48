import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuditLog } from '../operators/audit.js';
import { secretDigest, verifyPassword } from '../operators/credentials.js';
import { type Actor, ADMIN_TOKEN_ACTOR } from '../operators/roles.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { LINK_VALID_MS, type UserOperations, userOperations } from './users.js';

/** The user operations (docs/reference.md#operators) on a real store, with the audit log they keep. */

const BY: Actor = { name: ADMIN_TOKEN_ACTOR, role: 'admin', via: 'admin-token', address: '198.51.100.4' };
const AT = Date.parse('2026-11-27T09:00:00.000Z');

let store: Store;
const withToken = (configured: boolean): UserOperations =>
  userOperations({
    store,
    audit: createAuditLog({ store, log: pino({ level: 'silent' }) }),
    adminTokenConfigured: configured,
    now: () => new Date(AT),
  });

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
});
afterEach(() => store.close());

const refusal = (work: Promise<unknown>) =>
  work.then(
    () => 'done',
    (err: Error) => err.message,
  );

describe('userOperations', () => {
  it('adds a user with a hashed password, or with a link of 24 hours kept as its digest', async () => {
    const users = withToken(false);
    const PASSWORD = 'twelve chars!';
    const set = await users.add(BY, { email: '  Ada@Example.COM ', role: 'admin', password: PASSWORD }, 'http://x');
    expect(set).toEqual({ user: expect.objectContaining({ email: 'ada@example.com', password_set: true }) });
    expect(await verifyPassword(PASSWORD, (await store.findUser('ada@example.com'))!.passwordHash)).toBe(true);
    const linked = await users.add(BY, { email: 'ben@example.com', role: 'viewer' }, 'https://callhook.example.com/');
    const secret = /^https:\/\/callhook\.example\.com\/ui\/password\/([\w-]{43})$/.exec(linked.link!.url)![1]!;
    expect(linked.link!.expires_at).toBe(new Date(AT + LINK_VALID_MS).toISOString());
    expect(await store.checkPasswordLink(secretDigest(secret), new Date(AT).toISOString())).toMatchObject({
      user: { email: 'ben@example.com' },
    });
    const entries = await store.listAudit({});
    expect(entries.map((e) => [e.action, e.target, e.outcome, e.details])).toEqual([
      ['user.add', 'ben@example.com', 'ok', { role: 'viewer', password: 'link' }],
      ['user.add', 'ada@example.com', 'ok', { role: 'admin', password: 'set' }],
    ]);
    expect(JSON.stringify(entries)).not.toMatch(new RegExp(`${PASSWORD}|${secret}|scrypt`));
  });

  it('refuses what will not do before writing anything, and keeps each refusal with its code', async () => {
    const users = withToken(false);
    await users.add(BY, { email: 'ada@example.com', role: 'admin' }, 'http://x');
    const before = await users.list();
    expect(await refusal(users.add(BY, { email: 'eve@example.com', role: 'root' }, 'http://x'))).toBe(
      'Bad request: role: "root" is no role (roles: viewer, operator, admin)',
    );
    expect(
      await refusal(users.add(BY, { email: 'eve@example.com', role: 'viewer', password: 'eleven char' }, 'h')),
    ).toBe('Bad request: password: a password has at least 12 characters');
    expect(await refusal(users.add(BY, { email: 'eve at example.com', role: 'viewer' }, 'h'))).toMatch(
      /is not an address/,
    );
    expect(await refusal(users.add(BY, { email: `${'a'.repeat(250)}@x.io`, role: 'viewer' }, 'h'))).toMatch(
      /at most 254 characters/,
    );
    expect(await refusal(users.setRole(BY, 'ada@example.com', 'viewer'))).toMatch(
      /^Conflict: making viewer of ada@example.com would leave no admin: set CALLHOOK_ADMIN_TOKEN first/,
    );
    expect(await refusal(users.remove(BY, 'ada@example.com'))).toMatch(/would leave no admin/);
    expect(await users.list()).toEqual(before);
    const outcomes = (await store.listAudit({})).map((e) => e.outcome);
    expect(outcomes).toEqual([
      'CONFLICT',
      'CONFLICT',
      'BAD_REQUEST',
      'BAD_REQUEST',
      'BAD_REQUEST',
      'BAD_REQUEST',
      'ok',
    ]);
    // With the admin token configured, it may go.
    await withToken(true).remove(BY, 'ada@example.com');
    expect(await users.list()).toEqual([]);
  });

  it('makes a token shown once and kept as its digest, and revokes it under its user', async () => {
    const users = withToken(true);
    await users.add(BY, { email: 'ana@example.com', role: 'operator' }, 'http://x');
    const { token, info } = await users.addToken(BY, 'ana@example.com', undefined);
    expect(info).toEqual({
      id: expect.any(String),
      name: 'token-2026-11-27',
      created_at: new Date(AT).toISOString(),
      last_used_at: null,
    });
    expect((await store.findToken(secretDigest(token)))?.user.email).toBe('ana@example.com');
    expect(await refusal(users.addToken(BY, 'ana@example.com', '\u0007'))).toMatch(/control character/);
    await users.revokeToken(BY, info.id);
    expect(await store.findToken(secretDigest(token))).toBeUndefined();
    const entries = await store.listAudit({ action: 'token.revoke' });
    expect(entries.map((e) => [e.target, e.details])).toEqual([['ana@example.com', { id: info.id, name: info.name }]]);
    expect(JSON.stringify(await store.listAudit({}))).not.toContain(token);
  });
});
