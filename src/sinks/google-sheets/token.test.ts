import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../../../test/fakes/google-sheets.js';
import { readServiceAccount } from './credentials.js';
import { serviceAccountTokens } from './token.js';

/** The access token of the service account: one request shared by concurrent callers, kept until near its expiry. */

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const clientEmail = 'tokens@acme-calls.iam.gserviceaccount.com';
const account = readServiceAccount(
  JSON.stringify({
    type: 'service_account',
    client_email: clientEmail,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  }),
);

let google: FakeGoogle;
beforeAll(async () => {
  google = await startFakeGoogle();
  google.trust({ clientEmail, publicKey });
});
afterAll(() => google?.close());
const tokenRequests = () => google.requests.filter((r) => r.endpoint === 'token').length;
const signal = () => new AbortController().signal;

describe('service account tokens', () => {
  it('makes one token request for callers asking at once; one caller giving up does not end it for the others', async () => {
    const tokens = serviceAccountTokens({ account, tokenUrl: google.tokenUrl });
    const before = tokenRequests();
    const impatient = new AbortController();
    const asked = [
      tokens.token(signal()),
      tokens.token(impatient.signal),
      tokens.token(signal()),
      tokens.token(signal()),
    ];
    impatient.abort(new Error('timed out'));
    const [first, given, ...others] = await Promise.allSettled(asked);
    expect(given).toMatchObject({ status: 'rejected', reason: new Error('timed out') });
    expect(first).toMatchObject({ status: 'fulfilled', value: expect.stringMatching(/^ya29\.fake-/) });
    expect(others.map((o) => (o as PromiseFulfilledResult<string>).value)).toEqual([
      (first as PromiseFulfilledResult<string>).value,
      (first as PromiseFulfilledResult<string>).value,
    ]);
    expect(tokenRequests() - before).toBe(1);
  });

  it('keeps the token until a minute before it expires, then fetches another; a token the API refused is dropped at once', async () => {
    // Tokens of 70 s, so the clock need not move further than the grant's iat may run ahead of Google's.
    google.tokenLifetime(70);
    let now = Date.now();
    const tokens = serviceAccountTokens({ account, tokenUrl: google.tokenUrl, now: () => now });
    const before = tokenRequests();
    const first = await tokens.token(signal());
    now += 9_000;
    expect(await tokens.token(signal())).toBe(first);
    expect(tokenRequests() - before).toBe(1);
    now += 2_000;
    const second = await tokens.token(signal());
    expect(second).not.toBe(first);
    expect(tokenRequests() - before).toBe(2);
    tokens.invalidate(first);
    expect(await tokens.token(signal())).toBe(second);
    tokens.invalidate(second);
    expect(await tokens.token(signal())).not.toBe(second);
    expect(tokenRequests() - before).toBe(3);
    google.tokenLifetime(3599);
  });
});
