import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot, startFakeHubSpot } from '../../../test/fakes/hubspot.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { hubspotRetryAfter } from './client.js';
import { hubspotSink } from './hubspot.js';

/**
 * What HubSpot refuses, and what the sink makes of it (docs/reference.md#sinks-and-delivery,
 * docs/reference.md#what-every-sink-shares and docs/reference.md#crm-sinks): a 429 waits as long as HubSpot's headers
 * (or, from a search, its body) say; a revoked or expired token, a missing scope and an unknown property are dead at
 * once with HubSpot's words and never the token; a 5xx and a lost reply are tried again. And the options, checked at
 * start-up.
 */

const log = pino({ level: 'silent' });
const record = (data: CallRecord['data'] = {}): CallRecord => ({
  id: '019a0000-0000-7000-8000-0000000000e1',
  hook: 'end-of-call',
  dedup_key: null,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems: [],
  data: { first_name: 'Asha', phone_number: '+919812345678', email_address: 'asha@example.in', ...data },
});
const context = () => ({ attempt: 1, idempotencyKey: 'x:crm', signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error & { status?: number; retryAfterMs?: number },
  );

let hubspot: FakeHubSpot;
beforeAll(async () => {
  hubspot = await startFakeHubSpot({ rateLimitIntervalMs: 2000 });
});
afterAll(() => hubspot.close());

const open = (options: Record<string, unknown> = {}) =>
  hubspotSink.open(hubspotSink.options.parse({ token: hubspot.token, api_url: hubspot.url, ...options }), {
    name: 'crm',
    dataDir: '/nonexistent',
    log,
  });

describe('hubspot sink: rate limits', () => {
  it('waits as long as X-HubSpot-RateLimit-Interval-Milliseconds says when the window is spent', async () => {
    hubspot.fail('rate-limit');
    const err = await failure((await open()).deliver(record(), context()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 2000 });
    expect(err.message).toMatch(
      /^HubSpot 429 RATE_LIMIT: You have reached your ten_secondly_rolling limit\. \(correlationId [0-9a-f-]{36}\)$/,
    );
  });

  it("waits a second for a search's own limit, which sends no headers and names its policy in the body", async () => {
    hubspot.fail('search-rate-limit', { on: /\/search$/ });
    const err = await failure((await open()).deliver(record({ email_address: '' }), context()));
    expect(err).toMatchObject({ name: 'RetryableError', status: 429, retryAfterMs: 1000 });
    const limited = hubspot.requests.at(-1)!;
    expect(limited.path).toBe('/crm/v3/objects/contacts/search');
  });

  it('reads the headers of a 429 only when they say the window is spent', () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(
      hubspotRetryAfter(
        headers({ 'x-hubspot-ratelimit-remaining': '0', 'x-hubspot-ratelimit-interval-milliseconds': '10000' }),
      ),
    ).toBe(10_000);
    expect(
      hubspotRetryAfter(
        headers({ 'x-hubspot-ratelimit-remaining': '3', 'x-hubspot-ratelimit-interval-milliseconds': '10000' }),
      ),
    ).toBeUndefined();
    expect(hubspotRetryAfter(headers({ 'x-hubspot-ratelimit-secondly-remaining': '0' }))).toBe(1000);
    expect(
      hubspotRetryAfter(
        headers({ 'x-hubspot-ratelimit-remaining': '0', 'x-hubspot-ratelimit-interval-milliseconds': 'soon' }),
      ),
    ).toBeUndefined();
  });
});

describe('hubspot sink: refusals that end the delivery', () => {
  it("is dead at once with HubSpot's message when the token was deleted or has expired, and never shows the token", async () => {
    const sink = await open();
    try {
      hubspot.revoke('revoked');
      const revoked = await failure(sink.deliver(record(), context()));
      expect(revoked).toBeInstanceOf(PermanentError);
      expect(revoked.status).toBe(401);
      expect(revoked.message).toMatch(
        /^HubSpot 401 INVALID_AUTHENTICATION: Authentication credentials not found\. .* \(correlationId [0-9a-f-]{36}\)$/,
      );
      hubspot.revoke('expired');
      const expired = await failure(sink.deliver(record(), context()));
      expect(expired).toMatchObject({ name: 'PermanentError', status: 401 });
      expect(expired.message).toMatch(
        /^HubSpot 401 EXPIRED_AUTHENTICATION: The OAuth token used to make this call expired 1 day\(s\) ago\./,
      );
      for (const err of [revoked, expired]) expect(`${err.message} ${String(err.cause)}`).not.toContain(hubspot.token);
    } finally {
      hubspot.restore();
    }
  });

  it('is dead at once, naming the scope, when the private app was not granted it', async () => {
    hubspot.scopes.delete('crm.objects.contacts.write');
    try {
      const err = await failure((await open()).deliver(record(), context()));
      expect(err).toBeInstanceOf(PermanentError);
      expect(err.status).toBe(403);
      expect(err.message).toMatch(
        /^HubSpot 403 MISSING_SCOPES: This app hasn't been granted all required scopes to make this call\. .* \(the token needs crm\.objects\.contacts\.write\) \(correlationId /,
      );
    } finally {
      hubspot.scopes.add('crm.objects.contacts.write');
    }
  });

  it('is dead at once, naming the property, when `map` names one HubSpot does not have', async () => {
    const err = await failure((await open({ map: { favourite_colour: 'teal' } })).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status: 400 });
    expect(err.message).toContain(
      'HubSpot 400 VALIDATION_ERROR: Property values were not valid: [{"isValid":false,"message":"Property \\"favourite_colour\\" does not exist"',
    );
  });

  it('refuses a call with neither an email address nor a phone number before asking HubSpot anything', async () => {
    const before = hubspot.requests.length;
    const err = await failure((await open()).deliver(record({ email_address: '', phone_number: '' }), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe(
      'the call has neither an email address nor a phone number to find or create the HubSpot contact by (email_address, phone_number, or `email` / `phone` in map)',
    );
    expect(hubspot.requests.length).toBe(before);
  });
});

describe('hubspot sink: failures worth another attempt', () => {
  it('retries a 5xx and a lost reply', async () => {
    hubspot.fail('server-error');
    expect(await failure((await open()).deliver(record(), context()))).toMatchObject({
      name: 'RetryableError',
      status: 502,
    });
    hubspot.fail('lost-reply');
    const lost = await failure((await open()).deliver(record(), context()));
    expect(lost).toBeInstanceOf(RetryableError);
    expect(lost.message).toMatch(/^network error: /);
  });

  it("passes the delivery's signal on: an aborted attempt rejects with its reason and asks nothing", async () => {
    const before = hubspot.requests.length;
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const err = await failure((await open()).deliver(record(), { ...context(), signal: controller.signal }));
    expect(err.message).toBe('shutting down');
    expect(hubspot.requests.length).toBe(before);
  });
});

describe('the fake HubSpot itself', () => {
  const ask = async (path: string, body: unknown, token = hubspot.token) => {
    const reply = await fetch(`${hubspot.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return {
      status: reply.status,
      body: (await reply.json()) as Record<string, unknown>,
      limited: reply.headers.has('x-hubspot-ratelimit-max'),
    };
  };

  it("refuses a body not in the documented shape, a wrong association type and a wrong token, in HubSpot's error shape", async () => {
    const shape = {
      status: 'error',
      message: expect.any(String),
      correlationId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    };
    expect(
      await ask('/crm/v3/objects/contacts/batch/upsert', { inputs: [{ id: 'a@example.in', idProperty: 'email' }] }),
    ).toMatchObject({ status: 400, body: { ...shape, category: 'VALIDATION_ERROR' }, limited: true });
    const contact = await ask('/crm/v3/objects/contacts', { properties: { email: 'b@example.in' } });
    const call = {
      properties: { hs_timestamp: '2026-11-21T10:00:00.000Z' },
      associations: [
        { to: { id: contact.body.id }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 193 }] },
      ],
    };
    expect(await ask('/crm/v3/objects/calls', call)).toMatchObject({
      status: 400,
      body: { ...shape, category: 'VALIDATION_ERROR' },
    });
    expect(await ask('/crm/v3/objects/contacts/search', { filterGroups: [] }, 'pat-na1-wrong')).toMatchObject({
      status: 401,
      body: { ...shape, category: 'INVALID_AUTHENTICATION' },
      limited: false,
    });
    expect(
      await ask('/crm/v3/objects/contacts/search', {
        filterGroups: Array(6).fill({ filters: [{ propertyName: 'phone', operator: 'EQ', value: '1' }] }),
      }),
    ).toMatchObject({ status: 400, body: shape });
  });
});

describe('hubspot sink: options', () => {
  const parse = (options: Record<string, unknown>) =>
    hubspotSink.options.safeParse({ token: 'pat-na1-0000', ...options });
  const issue = (options: Record<string, unknown>) => parse(options).error?.issues[0];

  it("takes a token, with api_url defaulting to HubSpot's", () => {
    expect(parse({}).data).toMatchObject({ token: 'pat-na1-0000', api_url: 'https://api.hubapi.com' });
    expect(hubspotSink.secretOptions).toEqual(['token']);
    expect(hubspotSink.defaults?.rate).toEqual({ max: 3, per: '2s' });
  });

  it('refuses a missing or empty token, an api_url that would send it in the clear, an unknown root in map, an unknown option', () => {
    expect(hubspotSink.options.safeParse({}).error?.issues[0]).toMatchObject({
      path: ['token'],
      message: 'token is required: the access token of a HubSpot private app',
    });
    expect(issue({ token: '' })).toMatchObject({ path: ['token'], message: 'token must not be empty' });
    expect(issue({ api_url: 'http://api.hubapi.com' })).toMatchObject({
      path: ['api_url'],
      message: 'api_url must be https:// (plain http only to localhost)',
    });
    expect(issue({ api_url: 'hubapi' })).toMatchObject({ path: ['api_url'] });
    expect(issue({ map: { firstname: '{{ caller.name }}' } })).toMatchObject({
      path: ['map', 'firstname'],
      message: expect.stringContaining('unknown root "caller"'),
    });
    expect(issue({ properties: {} })).toMatchObject({ code: 'unrecognized_keys', keys: ['properties'] });
  });
});
