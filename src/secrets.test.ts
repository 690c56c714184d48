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

describe('the forms a secret takes in transit (docs/reference.md#secrets)', () => {
  const SECRET = 'p@ss w/rd+é"0123';
  const mask = secretMasker([SECRET]);

  it('masks it URL-encoded, as a path or query writes it and as a form body writes it', () => {
    expect(mask(`GET /x?token=${encodeURIComponent(SECRET)}&a=1`)).toBe('GET /x?token=***&a=1');
    expect(mask(`body: ${new URLSearchParams({ token: SECRET })}`)).toBe('body: token=***');
  });

  it('masks it JSON-escaped, also with non-ASCII written as \\u escapes, and inside JSON kept as text', () => {
    expect(mask(`error: ${JSON.stringify({ token: SECRET })}`)).toBe('error: {"token":"***"}');
    const asciiJson = JSON.stringify({ token: SECRET }).replace('é', '\\u00e9');
    expect(mask(`error: ${asciiJson}`)).toBe('error: {"token":"***"}');
    expect(JSON.parse(mask(JSON.stringify({ body: JSON.stringify({ token: SECRET }) })))).toEqual({
      body: '{"token":"***"}',
    });
  });

  it('masks it base64-encoded inside a Basic header, whatever the user name before it', () => {
    for (const user of ['', 'a', 'ab', 'abc', 'api-user']) {
      const header = `Basic ${Buffer.from(`${user}:${SECRET}`).toString('base64')}`;
      const masked = mask(`upstream said: Authorization: ${header} is wrong`);
      expect(masked, user).toContain('***');
      // What is left of the base64 around the mask decodes to no more than the user and a byte or two.
      const left = masked
        .replace(/^.*Basic (\S+) is wrong$/, '$1')
        .split('***')
        .join('');
      expect(Buffer.from(left, 'base64').toString('latin1'), user).not.toMatch(/ss w|rd\+|0123/);
    }
  });

  it('masks it as other encoders write it: lower-case percent-encoding, Go and .NET \\u escapes, PHP slashes', () => {
    const url = secretMasker(['https://hooks.example.com/T0/B0/xyz<e>&+1']);
    expect(url('{"url":"https:\\/\\/hooks.example.com\\/T0\\/B0\\/xyz\\u003ce\\u003E\\u0026\\u002B1"}')).toBe(
      '{"url":"***"}',
    );
    expect(url('error: https%3a%2f%2fhooks.example.com%2fT0%2FB0%2fxyz%3ce%3E%26%2b1 refused')).toBe(
      'error: *** refused',
    );
    // JSON text kept inside JSON: an upstream's escaped reply quoted in an error that is itself escaped.
    expect(
      url(
        JSON.stringify({
          error: JSON.stringify({ url: 'https://hooks.example.com/T0/B0/xyz<e>&+1' }).replace(/\//g, '\\/'),
        }),
      ),
    ).toBe('{"error":"{\\"url\\":\\"***\\"}"}');
  });

  it('masks a Basic header whose credentials hold a secret, however short', () => {
    const short = secretMasker(['Pw7abcd']);
    expect(short(`upstream got Authorization: Basic ${Buffer.from('bob:Pw7abcd').toString('base64')}`)).toBe(
      'upstream got Authorization: Basic ***',
    );
    expect(short(`basic ${Buffer.from('bob:other').toString('base64')}`)).toBe(
      `basic ${Buffer.from('bob:other').toString('base64')}`,
    );
  });

  it('masks base64 stretches of 8 characters or more, not shorter ones that would match by chance', () => {
    const short = secretMasker(['abcdef']);
    expect(short(`Basic ${Buffer.from('abcdef').toString('base64')}`)).toBe('Basic ***');
    expect(short(`Basic ${Buffer.from('abc').toString('base64')} is not masked`)).toBe('Basic YWJj is not masked');
  });
});
