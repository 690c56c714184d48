import { describe, expect, it } from 'vitest';
import { createLogger } from '../log.js';
import { secretMasker } from '../secrets.js';
import { createKeyRing } from './ring.js';

describe('a key ring', () => {
  it('accepts the keys it holds now, and after a replace only the new ones', () => {
    const ring = createKeyRing(['key-one-0123456789', 'key-two-0123456789']);
    expect(['key-one-0123456789', 'key-two-0123456789', 'key-one', ''].map((t) => ring.accepts(t))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    ring.replace(['key-three-0123456789']);
    expect(ring.keys).toEqual(['key-three-0123456789']);
    expect(ring.accepts('key-one-0123456789')).toBe(false);
    expect(ring.accepts('key-three-0123456789')).toBe(true);
  });

  it('never holds no key: a replace with none is refused and the keys stay', () => {
    expect(() => createKeyRing([])).toThrow(/at least one key/);
    const ring = createKeyRing(['key-one-0123456789']);
    expect(() => ring.replace([])).toThrow(/at least one key/);
    expect(ring.accepts('key-one-0123456789')).toBe(true);
  });

  it('adds every key it ever holds to the secrets, so maskers made before mask keys read later', () => {
    const secrets = new Set(['configured-secret']);
    const mask = secretMasker(secrets);
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      secrets,
      destination: { write: (line: string) => void lines.push(line) },
    });
    const ring = createKeyRing(['first-key-0123456789'], { secrets });
    ring.replace(['later-key-0123456789']);

    expect([...secrets]).toEqual(['configured-secret', 'first-key-0123456789', 'later-key-0123456789']);
    expect(mask('{"a":"later-key-0123456789 and first-key-0123456789"}')).toBe('{"a":"*** and ***"}');
    log.info({ echoed: 'later-key-0123456789' }, 'a line that quotes a key read later');
    expect(lines).toEqual([expect.stringContaining('"echoed":"***"')]);
    expect(lines.join('')).not.toContain('later-key');
  });
});
