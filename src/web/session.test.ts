import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKeyRing } from '../keys/ring.js';
import { hashPassword, secretDigest } from '../operators/credentials.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { createSessions, SESSION_MS } from './session.js';

const TOKEN = 'admin-token-0123456789abcdef';

let store: Store;
let now: number;
beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  now = Date.parse('2026-11-27T09:00:00Z');
});
afterEach(() => store.close());

async function addUser(email: string) {
  const at = new Date(now).toISOString();
  await store.addUser({
    id: `u-${email}`,
    email,
    role: 'operator',
    passwordHash: await hashPassword('a long password!'),
    at,
  });
  return (await store.listUsers()).find((u) => u.email === email)!;
}

describe('dashboard sessions in the store', () => {
  it('keeps only the digest of the cookie, and finds the user until 12 hours after sign-in', async () => {
    const sessions = createSessions({ store, ring: createKeyRing([TOKEN]), now: () => now });
    const user = await addUser('ann@example.com');
    const { value, maxAgeSeconds } = await sessions.begin({ user });
    expect(maxAgeSeconds).toBe(12 * 3600);
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The store knows the session by its digest; the value itself opens nothing there.
    expect(await store.findSession(value, new Date(now).toISOString())).toBeUndefined();
    expect(await store.findSession(secretDigest(value), new Date(now).toISOString())).toBeDefined();
    expect(await sessions.find(value)).toEqual({ user: expect.objectContaining({ email: 'ann@example.com' }) });
    now += SESSION_MS - 1;
    expect(await sessions.find(value)).toBeDefined();
    now += 1;
    expect(await sessions.find(value)).toBeUndefined();
  });

  it('ends at sign-out, and at a new role or password, which the store ends with the change', async () => {
    const sessions = createSessions({ store, ring: createKeyRing([TOKEN]), now: () => now });
    const user = await addUser('bob@example.com');
    const first = (await sessions.begin({ user })).value;
    const second = (await sessions.begin({ user })).value;
    await sessions.end(first);
    expect(await sessions.find(first)).toBeUndefined();
    expect(await sessions.find(second)).toBeDefined();
    await store.setRole(user.id, 'viewer', new Date(now).toISOString(), false);
    expect(await sessions.find(second)).toBeUndefined();
    const third = (await sessions.begin({ user })).value;
    await store.setPassword(user.id, await hashPassword('another long password'), new Date(now).toISOString());
    expect(await sessions.find(third)).toBeUndefined();
  });

  it('ends an admin-token session when the token it began with leaves the ring, and never holds the token', async () => {
    const ring = createKeyRing([TOKEN]);
    const sessions = createSessions({ store, ring, now: () => now });
    const { value } = await sessions.begin({ adminToken: TOKEN });
    expect(value).not.toContain(TOKEN);
    expect(await sessions.find(value)).toEqual({ adminToken: true });
    // A new token kept first, the old one still accepted: the session lives.
    ring.replace(['new-admin-token-fedcba9876543210', TOKEN]);
    expect(await sessions.find(value)).toEqual({ adminToken: true });
    ring.replace(['new-admin-token-fedcba9876543210']);
    expect(await sessions.find(value)).toBeUndefined();
  });

  it('asks the store nothing for a value that cannot be a session', async () => {
    let asked = 0;
    const counting = {
      addSession: (session: Parameters<Store['addSession']>[0]) => store.addSession(session),
      endSession: (digest: string) => store.endSession(digest),
      findSession: (digest: string, at: string) => {
        asked++;
        return store.findSession(digest, at);
      },
    };
    const sessions = createSessions({ store: counting, ring: createKeyRing([TOKEN]) });
    for (const value of [undefined, '', 'short', `${'a'.repeat(43)}.`, 'x'.repeat(44)])
      expect(await sessions.find(value)).toBeUndefined();
    expect(asked).toBe(0);
  });
});
