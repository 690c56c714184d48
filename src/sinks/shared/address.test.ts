import { describe, expect, it } from 'vitest';
import { hostAndPort } from './address.js';

describe('hostAndPort (docs/reference.md#operating: a URL in a message is its host and port only)', () => {
  it('leaves user info and query out, and fills in the service default port and host', () => {
    expect(hostAndPort('postgres://callhook:pw-secret@db.internal/calls?password=x', { defaultPort: 5432 })).toBe(
      'db.internal:5432',
    );
    expect(hostAndPort('redis://:pw-secret@10.0.0.5:6380', { defaultPort: 6379 })).toBe('10.0.0.5:6380');
    expect(hostAndPort('redis://', { defaultPort: 6379, defaultHost: '127.0.0.1' })).toBe('127.0.0.1:6379');
    expect(hostAndPort(new URL('nats://[::1]'), { defaultPort: 4222 })).toBe('[::1]:4222');
    expect(hostAndPort('not a url', { defaultPort: 5432 })).toBe('an address that is not a URL');
  });
});
