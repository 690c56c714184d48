import { describe, expect, it } from 'vitest';
import { pastedToken } from './pasted-token.js';

const TOKEN = 'cha_0123456789abcdefABCDEF-_';

describe('pastedToken', () => {
  it('takes the token bare, after Bearer in any case, or as the whole Authorization line serve prints', () => {
    for (const pasted of [
      TOKEN,
      `Bearer ${TOKEN}`,
      `bearer ${TOKEN}`,
      `BEARER  ${TOKEN}`,
      `Authorization: Bearer ${TOKEN}`,
      `    Authorization: Bearer ${TOKEN}\n`,
      `authorization:bearer\t${TOKEN}\r\n`,
      ` ${TOKEN} \n`,
    ])
      expect(pastedToken(pasted), JSON.stringify(pasted)).toBe(TOKEN);
  });

  it('leaves anything else as it is, to be refused as a wrong token', () => {
    expect(pastedToken('Basic abc')).toBe('Basic abc');
    expect(pastedToken(`Bearer: ${TOKEN}`)).toBe(`Bearer: ${TOKEN}`);
    expect(pastedToken(`X-Token: ${TOKEN}`)).toBe(`X-Token: ${TOKEN}`);
    expect(pastedToken('')).toBe('');
    expect(pastedToken('Bearer')).toBe('Bearer');
  });
});
