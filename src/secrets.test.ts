import { describe, expect, it } from 'vitest';
import { maskSecrets, secretMasker } from './secrets.js';

describe('secretMasker', () => {
  const mask = secretMasker(['short', 'a-longer-secret-holding-short', 'q"uote\\d']);

  it('gives back text that holds no secret as it is', () => {
    const text = '{"a": 1,  "b": "x"}';
    expect(mask(text)).toBe(text);
  });

  it('masks a secret that contains another whole, and the escaped form of one with a quote', () => {
    const masked = mask(JSON.stringify({ a: 'x a-longer-secret-holding-short y', b: ['q"uote\\d'], 'key short': 2 }));
    expect(JSON.parse(masked)).toEqual({ a: 'x *** y', b: ['***'], 'key ***': 2 });
  });

  it('masks inside JSON held as text in a string (a raw body), where it is escaped twice', () => {
    const raw = JSON.stringify({ body: JSON.stringify({ token: 'q"uote\\d' }) });
    expect(mask(raw)).not.toMatch(/uote/);
  });

  it('replaces where it stands in text that is not JSON', () => {
    expect(mask('HTTP 401: short is wrong')).toBe('HTTP 401: *** is wrong');
  });

  it('masks a value for JSON with indentation, a Date or URL as its text', () => {
    const value = { url: new URL('https://h/?k=short'), when: new Date(0), n: 5 };
    expect(maskSecrets(value, ['short'])).toEqual({ url: 'https://h/?k=***', when: '1970-01-01T00:00:00.000Z', n: 5 });
  });
});
