import { describe, expect, it } from 'vitest';
import { isEmail, isHttpUrl, toE164, toEnum } from './formats.js';

describe('toE164', () => {
  it.each([
    ['98123 45678', 'IN', '+919812345678'],
    ['9812345678', 'IN', '+919812345678'],
    ['09812345678', 'IN', '+919812345678'],
    ['+91 98123 45678', 'IN', '+919812345678'],
    ['+91-98123-45678', 'IN', '+919812345678'],
    ['+91 (981) 234-5678', 'IN', '+919812345678'],
    ['0091 98123 45678', 'IN', '+919812345678'],
    [' +919812345678 ', 'IN', '+919812345678'],
    ['+44 20 7946 0958', 'IN', '+442079460958'],
    ['+1 415 555 2671', 'IN', '+14155552671'],
    ['(415) 555-2671', 'US', '+14155552671'],
    ['011 44 20 7946 0958', 'US', '+442079460958'],
    ['020 7946 0958', 'GB', '+442079460958'],
  ] as const)('reads %j in region %s as %s', (input, region, expected) => {
    expect(toE164(input, region)).toBe(expected);
  });

  it.each([
    ['12345', 'IN'],
    ['+9112345', 'IN'],
    ['+91 98123 456789', 'IN'],
    ['+1 555 555 5555', 'IN'],
    ['call me on 98123 45678', 'IN'],
    ['not a number', 'IN'],
    ['', 'IN'],
  ] as const)('refuses %j in region %s', (input, region) => {
    expect(toE164(input, region)).toBeUndefined();
  });
});

describe('isEmail', () => {
  it.each(['asha@example.com', 'first.last+tag@mail.example.co.in', ' asha@example.com '])('accepts %j', (input) => {
    expect(isEmail(input)).toBe(true);
  });

  it.each(['asha', 'asha@', '@example.com', 'asha@example', 'asha @example.com', 'a@b@c.com', ''])(
    'refuses %j',
    (input) => {
      expect(isEmail(input)).toBe(false);
    },
  );
});

describe('isHttpUrl', () => {
  it.each([
    'https://example.com/recordings/abc.mp3',
    'http://example.com',
    'HTTPS://EXAMPLE.COM/x?y=1#z',
    'https://127.0.0.1:8443/r.wav',
    ' https://example.com/r.mp3 ',
  ])('accepts %j', (input) => {
    expect(isHttpUrl(input)).toBe(true);
  });

  it.each([
    'ftp://example.com/r.mp3',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'example.com/r.mp3',
    '/recordings/r.mp3',
    'http:example.com',
    'https://',
    'https://exa mple.com',
    'not a url',
    '',
  ])('refuses %j', (input) => {
    expect(isHttpUrl(input)).toBe(false);
  });
});

describe('toEnum', () => {
  const sentiments = ['Positive', 'Neutral', 'Negative'];

  it.each([
    ['Positive', 'Positive'],
    ['positive ', 'Positive'],
    ['NEGATIVE', 'Negative'],
    ['  neutral', 'Neutral'],
  ])('reads %j as %s', (input, expected) => {
    expect(toEnum(input, sentiments)).toBe(expected);
  });

  it.each(['happy', 'Pos', 'Positively', ''])('refuses %j', (input) => {
    expect(toEnum(input, sentiments)).toBeUndefined();
  });
});
