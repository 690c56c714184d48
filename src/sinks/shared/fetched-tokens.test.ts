import { describe, expect, it } from 'vitest';
import { SecretSet } from '../../secrets.js';
import { maskFetchedTokens } from './fetched-tokens.js';

describe('maskFetchedTokens', () => {
  it('keeps the newest two tokens masked and forgets the older ones, leaving the configured secrets alone', () => {
    const secrets = new SecretSet(['configured-secret-1']);
    const onToken = maskFetchedTokens((value) => {
      secrets.add(value);
      return () => void secrets.delete(value);
    });
    for (const token of ['tok-1', 'tok-2', 'tok-3', 'tok-4']) onToken(token);
    expect([...secrets].sort()).toEqual(['configured-secret-1', 'tok-3', 'tok-4']);
  });

  it("changes the set's version on every change, so a masker sees a token that replaced another", () => {
    const secrets = new SecretSet();
    const before = secrets.version;
    secrets.add('a');
    secrets.delete('a');
    secrets.add('b');
    expect(secrets.version).toBe(before + 3);
    expect(secrets.size).toBe(1);
  });
});
