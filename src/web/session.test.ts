import { describe, expect, it } from 'vitest';
import { createKeyRing } from '../keys/ring.js';
import { createSessions, SESSION_MS } from './session.js';

const TOKEN = 'admin-token-0123456789abcdef';

describe('dashboard sessions', () => {
  it('accepts a session it began, never carrying the token, until 12 hours after sign-in', () => {
    let now = 1_000_000;
    const sessions = createSessions(TOKEN, { now: () => now });
    const { value, maxAgeSeconds } = sessions.begin();
    expect(maxAgeSeconds).toBe(12 * 3600);
    expect(value).not.toContain(TOKEN);
    expect(sessions.valid(value)).toBe(true);
    now += SESSION_MS - 1;
    expect(sessions.valid(value)).toBe(true);
    now += 1;
    expect(sessions.valid(value)).toBe(false);
  });

  it('refuses a value whose end or signature was changed, and nothing at all', () => {
    const sessions = createSessions(TOKEN);
    const { value } = sessions.begin();
    const [id, ends, mac] = value.split('.') as [string, string, string];
    expect(sessions.valid(`${id}.${Number(ends) + 3_600_000}.${mac}`)).toBe(false);
    expect(sessions.valid(`${id}.${ends}.${mac.slice(0, -2)}AA`)).toBe(false);
    for (const bad of [undefined, '', 'x', `${value}.`, TOKEN]) expect(sessions.valid(bad)).toBe(false);
  });

  it('ends a session at logout, and only that one', () => {
    const sessions = createSessions(TOKEN);
    const a = sessions.begin().value;
    const b = sessions.begin().value;
    sessions.end(a);
    expect(sessions.valid(a)).toBe(false);
    expect(sessions.valid(b)).toBe(true);
  });

  it('is accepted by another replica sharing the token, and by none once the token is rotated', () => {
    const ring = createKeyRing([TOKEN]);
    const here = createSessions(ring);
    const there = createSessions(createKeyRing([TOKEN]));
    const { value } = here.begin();
    expect(there.valid(value)).toBe(true);
    // While both tokens are accepted the session stands; once the old one is gone, it ends.
    ring.replace(['admin-token-rotated-fedcba9876543210', TOKEN]);
    expect(here.valid(value)).toBe(true);
    ring.replace(['admin-token-rotated-fedcba9876543210']);
    expect(here.valid(value)).toBe(false);
    expect(createSessions('another-admin-token-000000000').valid(value)).toBe(false);
  });
});
