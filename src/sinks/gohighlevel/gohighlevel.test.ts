import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGoHighLevel, startFakeGoHighLevel } from '../../../test/fakes/gohighlevel.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { resolveSinks } from '../registry.js';
import { parseJson } from '../shared/refusal.js';
import type { Sink } from '../sink.js';
import { errorText, ghlRetryAfter } from './client.js';
import { gohighlevelSink } from './gohighlevel.js';
import { findNote } from './note.js';

/**
 * The sink against a local HighLevel (test/fakes/gohighlevel.ts): the caller found by email or by a phone written
 * differently and updated, or made a contact; one note per call whatever the repeats; an edit rewriting its note;
 * tags added beside the contact's own; and HighLevel's refusals kept in its own words.
 */

const log = pino({ level: 'silent' });
const RECORD_ID = '019a0000-0000-7000-8000-0000000000a1';
const record = (data: CallRecord['data'] = {}, over: Partial<CallRecord> = {}): CallRecord => ({
  id: RECORD_ID,
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems: [],
  data: {
    first_name: 'Asha',
    last_name: 'Verma',
    phone_number: '+919812345678',
    email_address: 'asha@example.in',
    call_outcome: 'order placed',
    sentiment_analysis: 'Positive',
    call_summary: 'Ordered two kettles.',
    call_duration: 184,
    ...data,
  },
  ...over,
});
/** The record without its email, so the caller is looked up by phone. */
const byPhone = (data: CallRecord['data'] = {}) => {
  const r = record(data);
  delete r.data.email_address;
  return r;
};
const context = () => ({ attempt: 1, idempotencyKey: `${RECORD_ID}:ghl`, signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error & { status?: number; retryAfterMs?: number },
  );

let fake: FakeGoHighLevel;
beforeEach(async () => {
  fake = await startFakeGoHighLevel();
});
afterEach(() => fake.close());

const open = (options: Record<string, unknown> = {}): Promise<Sink> | Sink =>
  gohighlevelSink.open(
    gohighlevelSink.options.parse({ token: fake.token, location_id: fake.locationId, api_url: fake.url, ...options }),
    { name: 'ghl', dataDir: '/nonexistent', log },
  );
const calls = () =>
  fake.requests.map(
    (r) =>
      `${r.method} ${r.path.replace(/\/contacts\/(?!search|upsert)[^/]+/, '/contacts/:id').replace(/notes\/[^/]+$/, 'notes/:id')}`,
  );

describe('gohighlevel sink: the caller and the call', () => {
  it('makes a new caller a contact with the call as a note holding the record id, every request with the token and Version', async () => {
    expect(await (await open()).deliver(record(), context())).toBeUndefined();
    expect(calls()).toEqual([
      'POST /contacts/search',
      'POST /contacts/upsert',
      'GET /contacts/:id/notes',
      'POST /contacts/:id/notes',
    ]);
    expect(
      fake.requests.every(
        (r) => r.headers.authorization === `Bearer ${fake.token}` && r.headers.version === '2021-07-28',
      ),
    ).toBe(true);
    expect(fake.requests[0]!.body).toEqual({
      locationId: fake.locationId,
      page: 1,
      pageLimit: 20,
      filters: [{ field: 'email', operator: 'eq', value: 'asha@example.in' }],
      sort: [{ field: 'dateUpdated', direction: 'desc' }],
    });
    expect(fake.requests[1]!.body).toEqual({
      locationId: fake.locationId,
      firstName: 'Asha',
      lastName: 'Verma',
      email: 'asha@example.in',
      phone: '+919812345678',
    });
    expect(fake.contacts).toHaveLength(1);
    const [contact] = fake.contacts;
    expect(contact).toMatchObject({
      firstName: 'Asha',
      lastName: 'Verma',
      email: 'asha@example.in',
      phone: '+919812345678',
    });
    expect(fake.notesOf(contact!.id).map((n) => n.body)).toEqual([
      `callhook ${RECORD_ID} (revision 1)\nReceived: 2026-11-21T10:00:00.000Z (hook end-of-call)\nOutcome: order placed\nSentiment: Positive\nDuration: 184 s\nSummary: Ordered two kettles.`,
    ]);
  });

  it('updates a caller known by email (any case), writing only the fields given, with no second contact', async () => {
    const known = fake.addContact({ firstName: 'A.', email: 'Asha@Example.in', phone: '+919800000000', city: 'Pune' });
    await (await open()).deliver(record(), context());
    expect(calls().slice(0, 2)).toEqual(['POST /contacts/search', 'PUT /contacts/:id']);
    expect(fake.requests[1]!.path).toBe(`/contacts/${known.id}`);
    // UpdateContactDto has no locationId: HighLevel refuses a body that carries one.
    expect(fake.requests[1]!.body).toEqual({
      firstName: 'Asha',
      lastName: 'Verma',
      email: 'asha@example.in',
      phone: '+919812345678',
    });
    expect(fake.contacts).toEqual([
      expect.objectContaining({ id: known.id, firstName: 'Asha', city: 'Pune', phone: '+919812345678' }),
    ]);
    expect(fake.notesOf(known.id)).toHaveLength(1);
  });

  it("finds a caller whose phone was typed in another format (098123 45678) from the record's +919812345678, and updates that contact", async () => {
    const known = fake.addContact({ firstName: 'Asha', phone: '098123 45678', tags: ['walk-in'] });
    fake.addContact({ firstName: 'Ravi', phone: '098765 43210' });
    await (await open()).deliver(byPhone({ last_name: 'Verma' }), context());
    expect(fake.requests[0]!.body).toMatchObject({
      filters: [
        {
          group: 'OR',
          filters: ['+919812345678', '+91 98123 45678', '098123 45678', '9812345678'].map((value) => ({
            field: 'phone',
            operator: 'eq',
            value,
          })),
        },
      ],
    });
    expect(calls()[1]).toBe('PUT /contacts/:id');
    expect(fake.contacts).toHaveLength(2);
    expect(fake.contacts.find((c) => c.id === known.id)).toMatchObject({
      lastName: 'Verma',
      phone: '+919812345678',
      tags: ['walk-in'],
    });
    expect(fake.notesOf(known.id)).toHaveLength(1);
  });

  it('of several contacts with the number, updates the most recently updated and says so in the attempt', async () => {
    const old = fake.addContact({ firstName: 'Asha', phone: '+919812345678', dateUpdated: '2026-01-01T00:00:00.000Z' });
    const recent = fake.addContact({
      firstName: 'Asha V',
      phone: '+91 98123 45678',
      dateUpdated: '2026-06-01T00:00:00.000Z',
    });
    const result = await (await open()).deliver(byPhone(), context());
    expect(result).toEqual({
      note: `2 GoHighLevel contacts have the phone +919812345678 (${recent.id}, ${old.id}); updated ${recent.id}, the most recently updated`,
    });
    expect(fake.requests[1]!.path).toBe(`/contacts/${recent.id}`);
    expect(fake.notesOf(recent.id)).toHaveLength(1);
    expect(fake.notesOf(old.id)).toHaveLength(0);
  });

  it('adds nothing when the same record is delivered again (a redeliver), nor after a reply lost once the note was made', async () => {
    const sink = await open();
    await sink.deliver(record(), context());
    await sink.deliver(record(), context());
    const [contact] = fake.contacts;
    expect(fake.notesOf(contact!.id)).toHaveLength(1);
    expect(calls().filter((c) => c === 'POST /contacts/:id/notes')).toHaveLength(1);

    fake.loseReply('POST', /\/notes$/);
    const other = record({}, { id: '019a0000-0000-7000-8000-0000000000b2' });
    expect(await failure(sink.deliver(other, context()))).toBeInstanceOf(RetryableError);
    expect(fake.notesOf(contact!.id)).toHaveLength(2);
    await sink.deliver(other, context());
    expect(fake.notesOf(contact!.id)).toHaveLength(2);
    expect(fake.contacts).toHaveLength(1);
  });

  it('rewrites the note for an edited call (revision 2), and leaves it when revision 1 comes again after', async () => {
    const sink = await open();
    await sink.deliver(record(), context());
    await sink.deliver(record({ call_outcome: 'order cancelled' }, { revision: 2 }), context());
    const [contact] = fake.contacts;
    const notes = fake.notesOf(contact!.id);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.body).toMatch(
      new RegExp(`^callhook ${RECORD_ID} \\(revision 2\\)\\n.*\\nOutcome: order cancelled\\n`),
    );
    expect(calls().filter((c) => c === 'PUT /contacts/:id/notes/:id')).toHaveLength(1);

    await sink.deliver(record(), context());
    expect(fake.notesOf(contact!.id)[0]!.body).toContain('Outcome: order cancelled');
    expect(calls().filter((c) => c.includes('/notes/:id'))).toHaveLength(1);
  });

  it("leaves a caller the search index has not caught up with to the upsert, which the location's duplicate rule matches", async () => {
    const second = record({ call_outcome: 'callback requested' }, { id: '019a0000-0000-7000-8000-0000000000c3' });
    await fake.close();
    fake = await startFakeGoHighLevel({ searchLagMs: 60_000 });
    const sink = await open();
    await sink.deliver(record(), context());
    await sink.deliver(second, context());
    expect(calls().filter((c) => c === 'POST /contacts/upsert')).toHaveLength(2);
    expect(fake.contacts).toHaveLength(1);
    expect(fake.notesOf(fake.contacts[0]!.id)).toHaveLength(2);

    // A location that allows duplicates makes the upsert a create: two calls seconds apart from a new caller are two
    // contacts there, as HighLevel documents (README says so).
    await fake.close();
    fake = await startFakeGoHighLevel({ searchLagMs: 60_000, allowDuplicates: true });
    const again = await open();
    await again.deliver(record(), context());
    await again.deliver(second, context());
    expect(fake.contacts).toHaveLength(2);
  });

  it("adds the tags option to the contact's own tags with the tags endpoint, never through the contact's tags field", async () => {
    const known = fake.addContact({ email: 'asha@example.in', tags: ['vip', 'callhook'] });
    await (await open({ tags: ['callhook', 'voice-ai'] })).deliver(record(), context());
    expect(fake.contacts[0]!.tags).toEqual(['vip', 'callhook', 'voice-ai']);
    const tagging = fake.requests.filter((r) => r.path === `/contacts/${known.id}/tags`);
    expect(tagging.map((r) => [r.method, r.body])).toEqual([['POST', { tags: ['callhook', 'voice-ai'] }]]);
    expect(
      fake.requests.some(
        (r) => typeof r.body === 'object' && r.body !== null && 'tags' in r.body && !r.path.endsWith('/tags'),
      ),
    ).toBe(false);
  });

  it("writes `map` fields by HighLevel's names, a custom field by its key in customFields", async () => {
    const sink = await open({
      map: {
        source: 'callhook {{ hook }}',
        firstName: '{{ extra.preferred_name }}',
        'customFields.contact.last_call_outcome': '{{ call_outcome }}',
        'customFields.contact.missing': '{{ nope }}',
      },
    });
    await sink.deliver(record({}, { extra: { preferred_name: 'Ashu' } }), context());
    expect(fake.requests[1]!.body).toEqual({
      locationId: fake.locationId,
      firstName: 'Ashu',
      lastName: 'Verma',
      email: 'asha@example.in',
      phone: '+919812345678',
      source: 'callhook end-of-call',
      customFields: [{ key: 'contact.last_call_outcome', field_value: 'order placed' }],
    });
    expect(fake.contacts[0]).toMatchObject({
      firstName: 'Ashu',
      source: 'callhook end-of-call',
      customFields: [{ key: 'contact.last_call_outcome', value: 'order placed' }],
    });
  });

  it("gives a known caller the `map` fields HighLevel's update does not take (companyName, gender) through the upsert, the rest through the update: one contact, nothing cleared, one note", async () => {
    for (const allowDuplicates of [false, true]) {
      await fake.close();
      fake = await startFakeGoHighLevel({ allowDuplicates });
      const known = fake.addContact({
        firstName: 'A.',
        email: 'Asha@Example.in',
        phone: '+919800000000',
        city: 'Pune',
        companyName: 'Old & Co',
      });
      const sink = await open({
        map: { companyName: '{{ extra.company }}', gender: 'female', source: 'callhook {{ hook }}' },
      });
      expect(await sink.deliver(record({}, { extra: { company: 'Kettle & Co' } }), context())).toBeUndefined();
      expect(calls()).toEqual([
        'POST /contacts/search',
        'PUT /contacts/:id',
        'POST /contacts/upsert',
        'GET /contacts/:id/notes',
        'POST /contacts/:id/notes',
      ]);
      expect(fake.requests[1]!.body).toEqual({
        firstName: 'Asha',
        lastName: 'Verma',
        email: 'asha@example.in',
        phone: '+919812345678',
        source: 'callhook end-of-call',
      });
      // The contact's email and phone as the update left them, so the location's rule matches it whichever field it
      // checks, and the flag keeps a location that allows duplicates from making a second contact.
      expect(fake.requests[2]!.body).toEqual({
        locationId: fake.locationId,
        email: 'asha@example.in',
        phone: '+919812345678',
        createNewIfDuplicateAllowed: false,
        companyName: 'Kettle & Co',
        gender: 'female',
      });
      expect(fake.contacts).toEqual([
        expect.objectContaining({
          id: known.id,
          firstName: 'Asha',
          lastName: 'Verma',
          email: 'asha@example.in',
          phone: '+919812345678',
          city: 'Pune',
          source: 'callhook end-of-call',
          companyName: 'Kettle & Co',
          gender: 'female',
        }),
      ]);
      expect(fake.notesOf(known.id)).toHaveLength(1);
    }
  });

  it('sends the upsert the email a caller found by phone already has, for a location that matches on email alone', async () => {
    await fake.close();
    fake = await startFakeGoHighLevel({ duplicateFields: ['email'] });
    const known = fake.addContact({ email: 'asha@example.in', phone: '098123 45678' });
    await (await open({ map: { companyName: 'Kettle & Co' } })).deliver(byPhone(), context());
    expect(fake.requests[2]!.body).toEqual({
      locationId: fake.locationId,
      email: 'asha@example.in',
      phone: '+919812345678',
      createNewIfDuplicateAllowed: false,
      companyName: 'Kettle & Co',
    });
    expect(fake.contacts).toEqual([expect.objectContaining({ id: known.id, companyName: 'Kettle & Co' })]);
  });

  it('of several contacts with the number, leaves out the fields only the upsert takes, which would pick among them by its own rule, and says so', async () => {
    const old = fake.addContact({ phone: '+919812345678', dateUpdated: '2026-01-01T00:00:00.000Z' });
    const recent = fake.addContact({ phone: '+91 98123 45678', dateUpdated: '2026-06-01T00:00:00.000Z' });
    const result = await (await open({ map: { companyName: 'Kettle & Co', city: 'Pune' } })).deliver(
      byPhone(),
      context(),
    );
    expect(result).toEqual({
      note: `2 GoHighLevel contacts have the phone +919812345678 (${recent.id}, ${old.id}); updated ${recent.id}, the most recently updated; companyName left out: HighLevel's update does not take it, and its upsert would choose among those contacts by the location's duplicate rule`,
    });
    expect(calls()).not.toContain('POST /contacts/upsert');
    expect(fake.contacts.find((c) => c.id === recent.id)).toMatchObject({ city: 'Pune' });
    expect(fake.contacts.some((c) => 'companyName' in c)).toBe(false);
    expect(fake.notesOf(recent.id)).toHaveLength(1);
  });

  it('says so in the attempt when the location matched the upsert to another contact, and notes the call on the one found', async () => {
    await fake.close();
    fake = await startFakeGoHighLevel({ allowDuplicates: true, duplicateFields: ['phone', 'email'] });
    const other = fake.addContact({ firstName: 'Ravi', phone: '+919812345678' });
    const known = fake.addContact({ email: 'asha@example.in' });
    const result = await (await open({ map: { companyName: 'Kettle & Co' } })).deliver(record(), context());
    expect(result).toEqual({
      note: `the upsert wrote companyName to contact ${other.id}, which the location's duplicate rule matched, not to ${known.id}`,
    });
    expect(fake.contacts).toHaveLength(2);
    expect(fake.notesOf(known.id)).toHaveLength(1);
  });

  it('refuses a record with neither email nor phone at once, asking HighLevel nothing', async () => {
    const { email_address: _e, phone_number: _p, ...data } = record().data;
    const err = await failure((await open()).deliver(record(undefined, { data }), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe(
      'the record has neither an email_address nor a valid phone_number: there is no way to find the caller in GoHighLevel',
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe('gohighlevel sink: what HighLevel refuses', () => {
  it('turns a 429 into a RetryableError waiting X-RateLimit-Interval-Milliseconds, and asks nothing more', async () => {
    fake.rateLimitNext(1, 7_000);
    const limited = await failure((await open()).deliver(record(), context()));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited).toMatchObject({
      status: 429,
      retryAfterMs: 7_000,
      message: 'HTTP 429: Too Many Requests (POST /contacts/search)',
    });
    expect(fake.contacts).toHaveLength(0);
  });

  it("ends a revoked token dead at once with HighLevel's message, never the token", async () => {
    fake.revoke();
    const err = await failure((await open()).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status: 401, message: 'HTTP 401: Invalid JWT (POST /contacts/search)' });
    expect(err.message).not.toContain(fake.token);
  });

  it("ends a missing scope (401) and another location's token (403) dead with HighLevel's words", async () => {
    fake.dropScope('contacts.write');
    const scope = await failure((await open()).deliver(record(), context()));
    expect(scope).toBeInstanceOf(PermanentError);
    expect(scope).toMatchObject({
      status: 401,
      message: 'HTTP 401: The token is not authorized for this scope. (POST /contacts/upsert)',
    });

    const elsewhere = await failure(
      (await open({ location_id: 'OtherLocation00000001' })).deliver(record(), context()),
    );
    expect(elsewhere).toBeInstanceOf(PermanentError);
    expect(elsewhere).toMatchObject({
      status: 403,
      message: 'HTTP 403: The token does not have access to this location. (POST /contacts/search)',
    });
  });

  it('ends a field HighLevel does not know dead with its validation message', async () => {
    const err = await failure((await open({ map: { favouriteColour: 'teal' } })).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({
      status: 422,
      message: 'HTTP 422: property favouriteColour should not exist (POST /contacts/upsert)',
    });
  });

  it('retries a 5xx and a HighLevel that cannot be reached', async () => {
    fake.failNext(1, 503);
    expect(await failure((await open()).deliver(record(), context()))).toMatchObject({
      status: 503,
      message: 'HTTP 503: Internal Server Error (POST /contacts/search)',
    });
    const url = fake.url;
    await fake.close();
    const unreachable = await failure((await open({ api_url: url })).deliver(record(), context()));
    expect(unreachable).toBeInstanceOf(RetryableError);
    expect(unreachable.message).toMatch(/^network error: /);
    fake = await startFakeGoHighLevel();
  });
});

describe("gohighlevel sink: options and HighLevel's headers", () => {
  const refusal = (options: Record<string, unknown>) =>
    resolveSinks([
      { name: 'ghl', type: 'gohighlevel', token: 'pit-0123456789', location_id: 'loc1', ...options } as never,
    ]).then(
      () => 'started',
      (err: Error) => err.message,
    );

  it('stops start-up naming the option: a missing token, an unknown root in map, a map target the sink owns, an unknown option', async () => {
    expect(await refusal({ token: undefined })).toBe('sinks[0] (ghl).token: token is required');
    expect(await refusal({ location_id: ' ' })).toBe('sinks[0] (ghl).location_id: location_id must not be empty');
    expect(await refusal({ map: { firstName: '{{ caller.name }}' } })).toMatch(
      /^sinks\[0\] \(ghl\)\.map\.firstName: \{\{ caller\.name \}\}: unknown root "caller"/,
    );
    expect(await refusal({ map: { tags: '{{ call_outcome }}' } })).toBe(
      "sinks[0] (ghl).map.tags: tags would replace the contact's tags; use the tags option, which adds them",
    );
    expect(await refusal({ map: { locationId: 'x' } })).toBe(
      'sinks[0] (ghl).map.locationId: locationId is the location_id option',
    );
    expect(await refusal({ map: { customFields: 'x' } })).toBe(
      'sinks[0] (ghl).map.customFields: name one custom field by its key: customFields.<key>',
    );
    expect(await refusal({ tags: ['callhook', ''] })).toBe('sinks[0] (ghl).tags.1: each tag must not be empty');
    expect(await refusal({ api_url: 'ftp://services.leadconnectorhq.com' })).toBe(
      'sinks[0] (ghl).api_url: api_url must be the https:// base URL of the HighLevel API',
    );
    expect(await refusal({ api_url: 'http://services.leadconnectorhq.com' })).toBe(
      'sinks[0] (ghl).api_url: api_url must be https:// (plain http only to localhost)',
    );
    expect(await refusal({ apiKey: 'x' })).toBe('sinks[0] (ghl).apiKey: unknown option');
    expect(await refusal({ map: { 'customFields.contact.budget': '{{ budget }}' } })).toBe('started');
  });

  it("keeps by default within HighLevel's burst limit (15 deliveries of at most 6 requests per 10 s) and masks the token", async () => {
    const [spec] = await resolveSinks([
      { name: 'ghl', type: 'gohighlevel', token: 'pit-0123456789', location_id: 'loc1' } as never,
    ]);
    expect(spec!.policy.rate).toEqual({ max: 15, perMs: 10_000 });
    expect(spec!.secretOptions).toEqual(['token']);
    expect(gohighlevelSink.options.parse({ token: 't', location_id: 'l' }).api_url).toBe(
      'https://services.leadconnectorhq.com',
    );
  });

  it('waits the burst window only when no burst request remains; a spent daily limit is left to the back-off', () => {
    const headers = (h: Record<string, string>) => new Headers(h);
    expect(ghlRetryAfter(headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-interval-milliseconds': '10000' }))).toBe(
      10_000,
    );
    expect(
      ghlRetryAfter(
        headers({
          'x-ratelimit-remaining': '3',
          'x-ratelimit-interval-milliseconds': '10000',
          'x-ratelimit-daily-remaining': '0',
        }),
      ),
    ).toBeUndefined();
    expect(
      ghlRetryAfter(headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-interval-milliseconds': 'soon' })),
    ).toBeUndefined();
    expect(
      errorText(
        parseJson(
          '{"statusCode":422,"message":["property a should not exist","b must be a string"],"error":"Unprocessable Entity"}',
        ),
      ),
    ).toBe('property a should not exist; b must be a string');
    expect(errorText(parseJson('{"msg":"Not authorized"}'))).toBe('Not authorized');
    expect(errorText(parseJson('<html>bad gateway</html>'))).toBeUndefined();
  });

  it('finds its note however HighLevel kept the line, and the highest revision of several', () => {
    expect(
      findNote(
        [
          { id: 'n1', body: `<p>callhook ${RECORD_ID} (revision 2)</p><p>Outcome: x</p>` },
          { id: 'n2', body: 'a note by a person' },
        ],
        RECORD_ID,
      ),
    ).toEqual({ id: 'n1', revision: 2 });
    expect(
      findNote(
        [
          { id: 'n1', body: `callhook ${RECORD_ID}` },
          { id: 'n3', body: `callhook ${RECORD_ID} (revision 3)` },
        ],
        RECORD_ID,
      ),
    ).toEqual({ id: 'n3', revision: 3 });
    expect(
      findNote(
        [
          { id: 'n1', body: 'callhook 019a0000-0000-7000-8000-0000000000ff (revision 1)' },
          { id: 'n2', body: null },
        ],
        RECORD_ID,
      ),
    ).toBeUndefined();
  });
});
