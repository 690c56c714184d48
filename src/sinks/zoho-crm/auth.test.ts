import pino from 'pino';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeZohoCrm, startFakeZohoCrm } from '../../../test/fakes/zoho-crm.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { zohoRetryAfter } from './reply.js';
import { zohoTokens } from './token.js';
import { zohoCrmSink } from './zoho-crm.js';

/** The token (refresh-token grant, kept, shared, renewed once), Zoho's refusals and rate limits, and the options. */

const log = pino({ level: 'silent' });
let n = 0;
const record = (data: CallRecord['data'] = {}): CallRecord => ({
  id: `019a0000-0000-7000-9000-${String(++n).padStart(12, '0')}`,
  hook: 'end-of-call',
  dedup_key: `call_id:a${n}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems: [],
  data: {
    first_name: 'Asha',
    last_name: 'Verma',
    phone_number: '+919812345678',
    email_address: `asha${n}@example.in`,
    call_outcome: 'order placed',
    ...data,
  },
});
const context = (signal = new AbortController().signal) => ({ attempt: 1, idempotencyKey: 'x:crm', signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

let zoho: FakeZohoCrm;
beforeEach(async () => {
  await zoho?.close();
  zoho = await startFakeZohoCrm();
});
afterAll(() => zoho?.close());

const options = (over: Record<string, unknown> = {}) => ({
  client_id: zoho.clientId,
  client_secret: zoho.clientSecret,
  refresh_token: zoho.refreshToken,
  token_url: zoho.tokenUrl,
  api_url: zoho.url,
  ...over,
});
const open = (over: Record<string, unknown> = {}) =>
  zohoCrmSink.open(zohoCrmSink.options.parse(options(over)), { name: 'crm', dataDir: '/nonexistent', log });
const unauthorized = (r: { method: string; path: string }) => r.path.startsWith('/crm/');
const apiRequests = () => zoho.requests.filter((r) => r.path.startsWith('/crm/')).length;
const expectNoSecret = (message: string) => {
  for (const secret of [zoho.clientSecret, zoho.refreshToken]) expect(message).not.toContain(secret);
};

describe('zoho-crm sink: the access token', () => {
  it('keeps one token for every delivery, and asks for a new one once when Zoho says it expired', async () => {
    const sink = await open();
    await sink.deliver(record(), context());
    await sink.deliver(record(), context());
    expect(zoho.tokenRequests()).toBe(1);
    zoho.expireTokens();
    const before = apiRequests();
    await sink.deliver(record(), context());
    expect(zoho.tokenRequests()).toBe(2);
    // The one request refused (401 INVALID_TOKEN) was asked again with the new token; nothing else was repeated.
    expect(apiRequests() - before).toBe(1 + 3);
    expect(zoho.notes).toHaveLength(3);
  });

  it('shares one token request among deliveries that start together', async () => {
    const sink = await open();
    await Promise.all(Array.from({ length: 6 }, () => sink.deliver(record(), context())));
    expect(zoho.tokenRequests()).toBe(1);
    expect(zoho.notes).toHaveLength(6);
  });

  it('renews the token shortly before Zoho says it expires, not after', async () => {
    let now = 0;
    const tokens = zohoTokens({
      tokenUrl: zoho.tokenUrl,
      clientId: zoho.clientId,
      clientSecret: zoho.clientSecret,
      refreshToken: zoho.refreshToken,
      now: () => now,
    });
    const signal = new AbortController().signal;
    const first = await tokens.get(signal);
    now = 3600_000 - 300_001;
    expect(await tokens.get(signal)).toBe(first);
    now = 3600_000 - 300_000;
    expect(await tokens.get(signal)).not.toBe(first);
    expect(zoho.tokenRequests()).toBe(2);
  });

  it("ends the delivery with Zoho's words when the refresh token is revoked, or the client is wrong", async () => {
    zoho.revokeRefreshToken();
    const revoked = await failure((await open()).deliver(record(), context()));
    expect(revoked).toBeInstanceOf(PermanentError);
    expect(revoked.message).toBe('Zoho Accounts refused the access token request: invalid_code');
    expectNoSecret(revoked.message);
    const wrong = await failure((await open({ client_secret: 'not-the-secret' })).deliver(record(), context()));
    expect(wrong).toBeInstanceOf(PermanentError);
    expect(wrong.message).toBe('Zoho Accounts refused the access token request: invalid_client');
    expect(zoho.requests.filter((r) => r.path.startsWith('/crm/'))).toHaveLength(0);
  });

  it("waits out Zoho's throttle of token requests as a rate limit of the whole sink, then goes on", async () => {
    zoho.throttleTokens(1);
    const sink = await open();
    const throttled = await failure(sink.deliver(record(), context()));
    expect(throttled).toBeInstanceOf(RetryableError);
    expect(throttled).toMatchObject({ status: 429, retryAfterMs: undefined });
    expect(throttled.message).toBe(
      'Zoho Accounts refused the access token request: Access Denied: You have made too many requests continuously. Please try again after some time.',
    );
    await sink.deliver(record(), context());
    expect(zoho.notes).toHaveLength(1);
  });

  it('gives up a token still refused after one renewal, and renews none for a missing scope', async () => {
    const sink = await open();
    zoho.failNext(2, {
      match: unauthorized,
      status: 401,
      body: { code: 'INVALID_TOKEN', details: {}, message: 'invalid oauth token', status: 'error' },
    });
    const twice = await failure(sink.deliver(record(), context()));
    expect(twice).toBeInstanceOf(PermanentError);
    expect(twice).toMatchObject({
      status: 401,
      message: 'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 401 INVALID_TOKEN: invalid oauth token',
    });
    expect(zoho.tokenRequests()).toBe(2);

    zoho.failNext(1, {
      match: unauthorized,
      status: 401,
      body: { code: 'OAUTH_SCOPE_MISMATCH', details: {}, message: 'Unauthorized', status: 'error' },
    });
    const scope = await failure(sink.deliver(record(), context()));
    expect(scope).toBeInstanceOf(PermanentError);
    expect(scope.message).toBe('Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 401 OAUTH_SCOPE_MISMATCH: Unauthorized');
    expect(zoho.tokenRequests()).toBe(2);
  });
});

describe('zoho-crm sink: refusals and rate limits', () => {
  it("is dead at once for a missing permission and for a field Zoho does not know, with Zoho's words", async () => {
    const sink = await open();
    zoho.failNext(1, {
      status: 403,
      body: { code: 'NO_PERMISSION', details: {}, message: 'Permission denied to upsert', status: 'error' },
    });
    const denied = await failure(sink.deliver(record(), context()));
    expect(denied).toBeInstanceOf(PermanentError);
    expect(denied).toMatchObject({
      status: 403,
      message: 'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 403 NO_PERMISSION: Permission denied to upsert',
    });

    const unknown = await failure(
      (await open({ map: { Favourite_Kettle__c: '{{ call_outcome }}' } })).deliver(record(), context()),
    );
    expect(unknown).toBeInstanceOf(PermanentError);
    expect(unknown.message).toBe(
      'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 400 INVALID_DATA: invalid data (Favourite_Kettle__c)',
    );
  });

  it("reads the wait of a 429 from Zoho's headers: Retry-After, else X-RATELIMIT-RESET, else none (the back-off step)", async () => {
    const sink = await open();
    const body = {
      code: 'TOO_MANY_REQUESTS',
      details: {},
      message: 'The number of concurrent requests has exceeded the limit',
      status: 'error',
    };
    zoho.failNext(1, { status: 429, headers: (request) => ({ 'X-RATELIMIT-RESET': String(request.at + 5000) }), body });
    const limited = await failure(sink.deliver(record(), context()));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited).toMatchObject({
      status: 429,
      message:
        'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 429 TOO_MANY_REQUESTS: The number of concurrent requests has exceeded the limit',
    });
    // The reset is 5 s after the fake got the request; the wait is read when its reply arrives, on a loaded machine
    // later.
    expect((limited as RetryableError).retryAfterMs).toBeGreaterThan(2500);
    expect((limited as RetryableError).retryAfterMs).toBeLessThanOrEqual(5000);

    zoho.failNext(1, { status: 429, headers: { 'Retry-After': '7' }, body });
    expect(await failure(sink.deliver(record(), context()))).toMatchObject({ status: 429, retryAfterMs: 7000 });
    zoho.failNext(1, { status: 429, body });
    expect(await failure(sink.deliver(record(), context()))).toMatchObject({ status: 429, retryAfterMs: undefined });

    expect(zohoRetryAfter(new Headers({ 'x-ratelimit-reset': '1800000012000' }), 1800000000000)).toBe(12_000);
    expect(zohoRetryAfter(new Headers({ 'x-ratelimit-reset': '1800000012' }), 1800000000000)).toBe(12_000);
    expect(zohoRetryAfter(new Headers({ 'x-ratelimit-reset': '30' }), 1800000000000)).toBe(30_000);
    expect(zohoRetryAfter(new Headers({ 'x-ratelimit-reset': 'soon' }))).toBeUndefined();
  });

  it('retries a server error, a lost connection and a token endpoint that is down', async () => {
    const sink = await open();
    zoho.failNext(1, {
      status: 500,
      body: { code: 'INTERNAL_ERROR', details: {}, message: 'Internal Server Error', status: 'error' },
    });
    expect(await failure(sink.deliver(record(), context()))).toMatchObject({
      status: 500,
      message: 'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 500 INTERNAL_ERROR: Internal Server Error',
    });
    zoho.failNext(1, { lost: true });
    expect(await failure(sink.deliver(record(), context()))).toBeInstanceOf(RetryableError);

    zoho.failNext(1, { match: (r) => r.path === '/oauth/v2/token', status: 503, body: 'maintenance' });
    const down = await failure((await open()).deliver(record(), context()));
    expect(down).toBeInstanceOf(RetryableError);
    expect(down).toMatchObject({ status: 503 });
  });

  it("passes the delivery's signal on: an aborted attempt rejects with its reason", async () => {
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const err = await failure((await open()).deliver(record(), context(controller.signal)));
    expect(err.message).toBe('shutting down');
  });
});

describe('zoho-crm sink: options', () => {
  const parse = (over: Record<string, unknown>) => zohoCrmSink.options.safeParse(options(over));
  const issue = (over: Record<string, unknown>) => parse(over).error?.issues[0];

  it('checks them at start-up, naming the one that is wrong', () => {
    expect(parse({}).success).toBe(true);
    const { refresh_token: _, ...noToken } = options();
    expect(zohoCrmSink.options.safeParse(noToken).error?.issues[0]).toMatchObject({
      path: ['refresh_token'],
      message: 'refresh_token is required',
    });
    expect(issue({ client_id: ' ' })).toMatchObject({ path: ['client_id'], message: 'client_id must not be empty' });
    expect(issue({ module: 'Deals' })).toMatchObject({ path: ['module'], message: 'module must be Contacts or Leads' });
    expect(issue({ api_url: 'zohoapis.in' })).toMatchObject({
      path: ['api_url'],
      message: 'api_url must be an https:// URL',
    });
    // The grant's secrets and the access token leave the machine on these: never in the clear to another host.
    expect(issue({ token_url: 'http://accounts.zoho.in/oauth/v2/token' })).toMatchObject({
      path: ['token_url'],
      message: 'token_url must be https:// (plain http only to localhost)',
    });
    expect(issue({ api_url: 'http://www.zohoapis.in' })).toMatchObject({
      path: ['api_url'],
      message: 'api_url must be https:// (plain http only to localhost)',
    });
    expect(issue({ map: { Title: '{{ nope.x }}' } })).toMatchObject({ path: ['map', 'Title'] });
    expect(issue({ map: { Title: '{{ nope.x }}' } })?.message).toMatch(/unknown root "nope"/);
    expect(issue({ token: 'x' })?.code).toBe('unrecognized_keys');
  });

  it("defaults to Contacts in India's data centre, and declares its secrets and its limits", () => {
    const { client_id, client_secret, refresh_token } = options();
    expect(zohoCrmSink.options.parse({ client_id, client_secret, refresh_token })).toMatchObject({
      module: 'Contacts',
      token_url: 'https://accounts.zoho.in/oauth/v2/token',
      api_url: 'https://www.zohoapis.in',
    });
    expect(zohoCrmSink.secretOptions).toEqual(['client_secret', 'refresh_token']);
    expect(zohoCrmSink.defaults).toEqual({ concurrency: 4, rate: { max: 500, per: '1h' } });
  });
});
