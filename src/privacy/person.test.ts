import { describe, expect, it } from 'vitest';
import { CallhookError } from '../errors.js';
import { holdsPerson, personHash, readPerson } from './person.js';

describe('readPerson', () => {
  const asha = readPerson({ phone: '098123 45678' });

  it('reads a number as intake does, in any spelling, to one E.164', () => {
    expect(asha).toMatchObject({ kind: 'phone', value: '+919812345678' });
    for (const spelling of ['+91 98123 45678', '9812345678', '0091 9812345678'])
      expect(readPerson({ phone: spelling })).toMatchObject({ value: '+919812345678' });
    expect(readPerson({ email: '  Asha@Example.IN ' })).toEqual({ kind: 'email', value: 'asha@example.in' });
  });

  it('finds every spelling of the number in text as sent or stored, and nothing else', () => {
    const found = [
      '+919812345678',
      '{"phone_number":"+91 98123 45678"}',
      'phone_number=%2B91+98123+45678&x=1',
      'phone=098123%2045678',
      'call 9812345678 now',
      '"98.123.456.78"',
      '(0) 98123-45678',
      '919812345678',
      '00919812345678',
      'line1\\n9812345678',
    ];
    for (const text of found) expect(holdsPerson(asha, text), text).toBe(true);
    const other = ['+919812345679', '19812345678', '98123456789', '+44 98123 456789', 'id 4981234567812'];
    for (const text of other) expect(holdsPerson(asha, text), text).toBe(false);
  });

  it('refuses no person, both, and what cannot be read, naming why', () => {
    const why = (request: Record<string, unknown>) => {
      try {
        readPerson(request);
      } catch (err) {
        expect(err).toBeInstanceOf(CallhookError);
        return (err as CallhookError).detail;
      }
      return 'read';
    };
    expect(why({})).toMatch(/give the person/);
    expect(why({ phone: ' ', email: '' })).toMatch(/give the person/);
    expect(why({ phone: '9812345678', email: 'a@b.in' })).toMatch(/not both/);
    expect(why({ phone: '12' })).toMatch(/cannot be read as a phone number/);
    expect(why({ email: 'asha at example' })).toMatch(/not an e-mail address/);
  });

  it('hashes a person by the store key, the same for any spelling, different by key', () => {
    const key = Buffer.alloc(32, 1);
    expect(personHash(asha, key)).toBe(personHash(readPerson({ phone: '+91 98123 45678' }), key));
    expect(personHash(asha, key)).not.toBe(personHash(asha, Buffer.alloc(32, 2)));
    expect(personHash(asha, key)).not.toContain('9812345678');
  });
});
