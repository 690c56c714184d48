import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeHubSpot, startFakeHubSpot } from '../../../test/fakes/hubspot.js';
import type { CallRecord } from '../../record.js';
import { hubspotSink } from './hubspot.js';

/**
 * The hubspot sink against a local HubSpot (test/fakes/hubspot.ts) that checks every request as HubSpot documents it:
 * the caller as a contact, found by email or by phone however it was typed, and the call as one call engagement
 * that a repeat never doubles and an edit rewrites (docs/reference.md#crm-sinks, issue 22).
 */

const log = pino({ level: 'silent' });
const ID = '019a0000-0000-7000-8000-000000000001';
const record = (data: CallRecord['data'] = {}, more: Partial<CallRecord> = {}): CallRecord => ({
  id: ID,
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
    call_summary: 'Ordered two kettles <b>today</b>.',
    call_duration: 184,
    recording_url: 'https://rec.example/8f14.mp3',
    ...data,
  },
  ...more,
});
const withoutEmail = (data: CallRecord['data'] = {}): CallRecord => {
  const { email_address: _, ...rest } = record(data).data;
  return { ...record(), data: rest };
};
const context = () => ({ attempt: 1, idempotencyKey: `${ID}:crm`, signal: new AbortController().signal, log });

let hubspot: FakeHubSpot;
beforeEach(async () => {
  hubspot = await startFakeHubSpot();
});
afterEach(() => hubspot.close());

const open = (options: Record<string, unknown> = {}) =>
  hubspotSink.open(hubspotSink.options.parse({ token: hubspot.token, api_url: hubspot.url, ...options }), {
    name: 'crm',
    dataDir: '/nonexistent',
    log,
  });
const contacts = () => [...hubspot.contacts.values()];
const calls = () => [...hubspot.calls.values()];

describe('hubspot sink: the caller as a contact', () => {
  it('makes a new caller a contact, with the call on its timeline holding the record id', async () => {
    const result = await (await open()).deliver(record(), context());
    expect(result).toBeUndefined();
    expect(contacts()).toHaveLength(1);
    const [contact] = contacts();
    expect(contact!.properties).toMatchObject({
      email: 'asha@example.in',
      firstname: 'Asha',
      lastname: 'Verma',
      phone: '+919812345678',
    });
    expect(calls()).toHaveLength(1);
    const [call] = calls();
    expect(call!.properties).toMatchObject({
      hs_timestamp: '2026-11-21T10:00:00.000Z',
      hs_call_title: `callhook ${ID}`,
      hs_call_status: 'COMPLETED',
      hs_call_duration: '184000',
      hs_call_recording_url: 'https://rec.example/8f14.mp3',
      hs_call_body:
        '<p><strong>Outcome:</strong> order placed</p><p><strong>Sentiment:</strong> Positive</p><p><strong>Summary:</strong> Ordered two kettles &lt;b&gt;today&lt;/b&gt;.</p>',
    });
    expect(call!.associations).toEqual([{ to: contact!.id, typeId: 194, category: 'HUBSPOT_DEFINED' }]);
    // By email: one upsert, no contact search; then the call is looked for before it is made.
    expect(hubspot.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /crm/v3/objects/contacts/batch/upsert',
      'POST /crm/v3/objects/calls/search',
      'POST /crm/v3/objects/calls',
    ]);
    expect(hubspot.requests[0]!.body).toEqual({
      inputs: [
        {
          id: 'asha@example.in',
          idProperty: 'email',
          properties: { firstname: 'Asha', lastname: 'Verma', phone: '+919812345678', email: 'asha@example.in' },
        },
      ],
    });
    expect(
      hubspot.requests.every(
        (r) =>
          r.headers.authorization === `Bearer ${hubspot.token}` && r.headers['content-type'] === 'application/json',
      ),
    ).toBe(true);
  });

  it('updates a caller known by email, leaving the fields the call did not have as they were', async () => {
    const id = hubspot.addContact({
      email: 'Asha@Example.in',
      firstname: 'A.',
      company: 'Kettles Ltd',
      jobtitle: 'Buyer',
    });
    await (await open()).deliver(record({ last_name: '' }), context());
    expect(contacts()).toHaveLength(1);
    expect(hubspot.contacts.get(id)!.properties).toMatchObject({
      email: 'Asha@Example.in',
      firstname: 'Asha',
      company: 'Kettles Ltd',
      jobtitle: 'Buyer',
    });
    expect(hubspot.contacts.get(id)!.properties.lastname).toBeUndefined();
    expect(calls()[0]!.associations[0]!.to).toBe(id);
  });

  it('finds a caller without an email by the number, however HubSpot holds it, and updates that contact', async () => {
    const typed = hubspot.addContact({ firstname: 'Asha', phone: '098123 45678', company: 'Kettles Ltd' });
    await (await open()).deliver(withoutEmail(), context());
    expect(contacts()).toHaveLength(1);
    expect(hubspot.contacts.get(typed)!.properties).toMatchObject({
      phone: '+919812345678',
      lastname: 'Verma',
      company: 'Kettles Ltd',
    });
    expect(calls()[0]!.associations[0]!.to).toBe(typed);
    const search = hubspot.requests.find((r) => r.path === '/crm/v3/objects/contacts/search')!.body as {
      filterGroups: unknown[];
    };
    expect(search.filterGroups).toContainEqual({
      filters: [
        {
          propertyName: 'phone',
          operator: 'IN',
          values: ['+919812345678', '+91 98123 45678', '098123 45678', '9812345678'],
        },
      ],
    });
    expect(hubspot.requests.map((r) => `${r.method} ${r.path}`)).toContain(`PATCH /crm/v3/objects/contacts/${typed}`);
  });

  it("finds a spelling no one guessed by HubSpot's calculated digits, in the mobile number too", async () => {
    const mobile = hubspot.addContact({ firstname: 'Ravi', mobilephone: '98765-43210' });
    await (await open()).deliver(
      withoutEmail({ first_name: 'Ravi', last_name: '', phone_number: '+919876543210' }),
      context(),
    );
    expect(contacts()).toHaveLength(1);
    expect(calls()[0]!.associations[0]!.to).toBe(mobile);
  });

  it('uses the most recently updated of several contacts with the number, and says so in the attempt', async () => {
    const older = hubspot.addContact(
      { firstname: 'Asha', phone: '+91 98123 45678' },
      { modifiedAt: '2026-01-01T00:00:00.000Z' },
    );
    const newer = hubspot.addContact(
      { firstname: 'Asha V', phone: '9812345678' },
      { modifiedAt: '2026-06-01T00:00:00.000Z' },
    );
    hubspot.addContact({ firstname: 'Other', phone: '+919812345679' });
    const result = await (await open()).deliver(withoutEmail(), context());
    expect(result).toEqual({
      note: `2 HubSpot contacts have +919812345678 (${newer}, ${older}); updated ${newer}, the most recently updated`,
    });
    expect(hubspot.contacts.get(newer)!.properties.lastname).toBe('Verma');
    expect(hubspot.contacts.get(older)!.properties.lastname).toBeUndefined();
    expect(calls()[0]!.associations[0]!.to).toBe(newer);
  });

  it("creates a contact for an unknown number, and a repeat within the search index's lag finds it", async () => {
    await hubspot.close();
    hubspot = await startFakeHubSpot({ indexLagMs: 60_000 });
    const sink = await open();
    await sink.deliver(withoutEmail(), context());
    await sink.deliver(withoutEmail(), context());
    expect(contacts()).toHaveLength(1);
    expect(calls()).toHaveLength(1);
    expect(hubspot.requests.filter((r) => r.method === 'POST' && r.path === '/crm/v3/objects/contacts')).toHaveLength(
      1,
    );
  });

  it("adds or replaces contact properties with `map`, by HubSpot's names", async () => {
    const sink = await open({
      map: {
        firstname: '{{ extra.nickname }}',
        lifecyclestage: 'lead',
        hs_lead_status: '{{ call_outcome }}',
        jobtitle: '{{ extra.missing }}',
      },
    });
    await sink.deliver({ ...record(), extra: { nickname: 'Ashu' } }, context());
    expect(contacts()[0]!.properties).toMatchObject({
      firstname: 'Ashu',
      lastname: 'Verma',
      lifecyclestage: 'lead',
      hs_lead_status: 'order placed',
    });
    expect(contacts()[0]!.properties.jobtitle).toBeUndefined();
  });

  it('looks the caller up by the email and phone `map` gives, when the call names them otherwise', async () => {
    const known = hubspot.addContact({ email: 'ravi@example.in' });
    const sink = await open({ map: { email: '{{ extra.customer_email }}' } });
    await sink.deliver({ ...withoutEmail(), extra: { customer_email: 'ravi@example.in' } }, context());
    expect(contacts()).toHaveLength(1);
    expect(calls()[0]!.associations[0]!.to).toBe(known);
  });
});

describe('hubspot sink: the call, once', () => {
  it('adds no second engagement for a redelivered call, whether its search sees it yet or not', async () => {
    // A lag a loaded machine cannot outrun between the first three deliveries (each a few local requests).
    const lagMs = 2_000;
    await hubspot.close();
    hubspot = await startFakeHubSpot({ indexLagMs: lagMs });
    await (await open()).deliver(record(), context());
    // Within the lag, the same process remembers what it made (recent.ts).
    const sink = await open();
    await sink.deliver(record(), context());
    await sink.deliver(record(), context());
    expect(calls()).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, lagMs + 100));
    // Past the lag, a fresh process (a restart, another replica) finds it by its title.
    await (await open()).deliver(record(), context());
    expect(calls()).toHaveLength(2);
    expect(contacts()).toHaveLength(1);
  });

  it('finds the call a lost reply made, on the retry, and adds nothing', async () => {
    const sink = await open();
    hubspot.fail('lost-reply', { on: /^POST \/crm\/v3\/objects\/calls$/ });
    await expect(sink.deliver(record(), context())).rejects.toMatchObject({ name: 'RetryableError' });
    expect(calls()).toHaveLength(1);
    await (await open()).deliver(record(), context());
    expect(calls()).toHaveLength(1);
  });

  it('rewrites the engagement it finds for an edited call (revision 2), adding none', async () => {
    const sink = await open();
    await sink.deliver(record(), context());
    const [call] = calls();
    const edited = record(
      { call_outcome: 'callback requested', call_summary: 'Call back on Monday.' },
      { revision: 2 },
    );
    await (await open()).deliver(edited, context());
    expect(calls()).toEqual([call]);
    expect(call!.properties.hs_call_body).toBe(
      '<p><strong>Outcome:</strong> callback requested</p><p><strong>Sentiment:</strong> Positive</p><p><strong>Summary:</strong> Call back on Monday.</p>',
    );
    expect(hubspot.requests.slice(-2)).toMatchObject([
      { method: 'PATCH', path: `/crm/v3/objects/calls/${call!.id}` },
      {
        method: 'PUT',
        path: `/crm/v4/objects/calls/${call!.id}/associations/default/contacts/${call!.associations[0]!.to}`,
        body: undefined,
      },
    ]);
    expect(call!.associations).toHaveLength(1);
  });

  it("puts the engagement on the right contact's timeline too when an edit corrected who called", async () => {
    await (await open()).deliver(record({ email_address: 'wrong@example.in' }), context());
    const [call] = calls();
    const [wrong] = contacts();
    await (await open()).deliver(record({ email_address: 'asha@example.in' }, { revision: 2 }), context());
    const right = contacts().find((c) => c.properties.email === 'asha@example.in')!;
    expect(calls()).toEqual([call]);
    // What was there stays: callhook cannot tell its own association from one a user added.
    expect(call!.associations.map((a) => a.to)).toEqual([wrong!.id, right.id]);
  });

  it('says so when HubSpot already holds two engagements for the call', async () => {
    const sink = await open();
    await sink.deliver(record(), context());
    const [first] = calls();
    await (await open()).deliver(record({}, { id: 'another' }), context());
    calls()[1]!.properties.hs_call_title = first!.properties.hs_call_title!;
    const result = await (await open()).deliver(record(), context());
    expect(result).toEqual({
      note: `2 HubSpot call engagements hold this call (${first!.id}, ${calls()[1]!.id}); added none`,
    });
    expect(calls()).toHaveLength(2);
  });
});
