import pino from 'pino';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeZohoCrm, startFakeZohoCrm } from '../../../test/fakes/zoho-crm.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { zohoCrmSink } from './zoho-crm.js';

const log = pino({ level: 'silent' });
let n = 0;
type Data = Record<string, CallRecord['data'][string] | undefined>;
/** A call of Asha's, with `data` changing it: a field given as undefined is one the call did not have. */
const record = (data: Data = {}, over: Partial<CallRecord> = {}): CallRecord => {
  const fields: Data = {
    first_name: 'Asha',
    last_name: 'Verma',
    phone_number: '+919812345678',
    email_address: 'asha@example.in',
    call_outcome: 'order placed',
    sentiment_analysis: 'Positive',
    call_summary: 'Ordered two kettles.',
    recording_url: 'https://rec.example/8f14.mp3',
    ...data,
  };
  return {
    id: `019a0000-0000-7000-8000-${String(++n).padStart(12, '0')}`,
    hook: 'end-of-call',
    dedup_key: `call_id:c${n}`,
    received_at: '2026-11-21T10:00:00.000Z',
    source: 'webhook',
    revision: 1,
    extra: { crm_stage: 'hot' },
    problems: [],
    data: Object.fromEntries(
      Object.entries(fields).filter((entry): entry is [string, CallRecord['data'][string]] => entry[1] !== undefined),
    ),
    ...over,
  };
};
const context = () => ({ attempt: 1, idempotencyKey: 'x:crm', signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

let zoho: FakeZohoCrm;
const secrets: string[] = [];
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
  zohoCrmSink.open(zohoCrmSink.options.parse(options(over)), {
    name: 'crm',
    dataDir: '/nonexistent',
    log,
    secret: (s) => (secrets.push(s), () => undefined),
  });
const apiRequests = () => zoho.requests.filter((r) => r.path.startsWith('/crm/'));

describe('zoho-crm sink: the caller and the call', () => {
  it('makes a new caller a contact and attaches the call as a note holding the record id', async () => {
    const call = record();
    expect(await (await open()).deliver(call, context())).toBeUndefined();
    expect(zoho.records.Contacts).toEqual([
      expect.objectContaining({
        First_Name: 'Asha',
        Last_Name: 'Verma',
        Phone: '+919812345678',
        Email: 'asha@example.in',
      }),
    ]);
    const [contact] = zoho.records.Contacts;
    expect(zoho.notes).toEqual([
      expect.objectContaining({
        Note_Title: `callhook ${call.id}`,
        Parent_Id: { module: { api_name: 'Contacts' }, id: contact!.id },
        Note_Content: `Outcome: order placed\nSentiment: Positive\nSummary: Ordered two kettles.\nRecording: https://rec.example/8f14.mp3\n\ncallhook record ${call.id}, revision 1`,
      }),
    ]);
    const upsert = apiRequests().find((r) => r.path === '/crm/v6/Contacts/upsert')!;
    expect(upsert.body).toEqual({
      data: [{ First_Name: 'Asha', Last_Name: 'Verma', Phone: '+919812345678', Email: 'asha@example.in' }],
      duplicate_check_fields: ['Email'],
    });
    expect(upsert.headers.authorization).toMatch(/^Zoho-oauthtoken 1000\./);
    // The token went to callhook's masker, the secrets of the grant only in its form body.
    expect(secrets).toContain(upsert.headers.authorization!.slice('Zoho-oauthtoken '.length));
    const grant = zoho.requests.find((r) => r.path === '/oauth/v2/token')!;
    expect(Object.fromEntries(grant.body as URLSearchParams)).toEqual({
      refresh_token: zoho.refreshToken,
      client_id: zoho.clientId,
      client_secret: zoho.clientSecret,
      grant_type: 'refresh_token',
    });
    expect([...grant.query]).toEqual([]);
  });

  it('updates a caller known by email, leaving their other fields as they were', async () => {
    const id = zoho.add('Contacts', { First_Name: 'A.', Last_Name: 'Verma', Email: 'ASHA@example.in', Title: 'Buyer' });
    await (await open()).deliver(record({ last_name: '' }), context());
    expect(zoho.records.Contacts).toEqual([
      expect.objectContaining({ id, First_Name: 'Asha', Last_Name: 'Verma', Title: 'Buyer', Phone: '+919812345678' }),
    ]);
    expect(zoho.notesOf(id)).toHaveLength(1);
  });

  it('finds a caller by a phone written another way (098123 45678 for +919812345678) and updates that contact by id', async () => {
    const id = zoho.add('Contacts', { Last_Name: 'Verma', Phone: '098123 45678', Title: 'Buyer' });
    const result = await (await open()).deliver(record({ email_address: undefined, last_name: undefined }), context());
    expect(result).toBeUndefined();
    expect(zoho.records.Contacts).toEqual([
      expect.objectContaining({ id, First_Name: 'Asha', Last_Name: 'Verma', Phone: '+919812345678', Title: 'Buyer' }),
    ]);
    expect(zoho.notesOf(id)).toHaveLength(1);
    const search = apiRequests().find((r) => r.path === '/crm/v6/Contacts/search')!;
    expect(search.query.get('criteria')).toContain('(Phone:equals:098123 45678)');
    expect(
      apiRequests()
        .filter((r) => r.method === 'PUT')
        .map((r) => r.body),
    ).toEqual([{ data: [{ First_Name: 'Asha', Phone: '+919812345678', id }] }]);
  });

  it('updates the most recently modified of several contacts with the number, and says so', async () => {
    const older = zoho.add('Contacts', { Last_Name: 'Old', Mobile: '+91 98123 45678' }, '2026-01-01T09:00:00+05:30');
    const newer = zoho.add('Contacts', { Last_Name: 'New', Phone: '9812345678' }, '2026-06-01T09:00:00+05:30');
    zoho.add('Contacts', { Last_Name: 'Other', Phone: '9812345679' }, '2026-12-01T09:00:00+05:30');
    const result = await (await open()).deliver(record({ email_address: undefined }), context());
    expect(result).toEqual({
      note: `2 Zoho CRM Contacts have +919812345678 (${newer}, ${older}); updated ${newer}, the most recently updated`,
    });
    expect(zoho.notesOf(newer)).toHaveLength(1);
    expect(zoho.notesOf(older)).toHaveLength(0);
  });

  it('creates a caller known by nobody from the phone, with a last name Zoho requires', async () => {
    await (await open()).deliver(record({ email_address: undefined, last_name: undefined }), context());
    expect(zoho.records.Contacts).toEqual([expect.objectContaining({ Last_Name: 'Asha', Phone: '+919812345678' })]);
    expect(zoho.records.Contacts[0]).not.toHaveProperty('First_Name');
    // By email, unnamed: the upsert is tried as it is first, so an existing contact is never renamed.
    await (await open()).deliver(record({ first_name: '', last_name: '', email_address: 'new@example.in' }), context());
    expect(zoho.records.Contacts.find((c) => c.Email === 'new@example.in')).toMatchObject({
      Last_Name: '+919812345678',
    });
  });

  it('adds no second note for a redelivered call, and rewrites it for an edited one (never back to an older revision)', async () => {
    const sink = await open();
    const call = record();
    await sink.deliver(call, context());
    await sink.deliver(call, context());
    expect(zoho.notes).toHaveLength(1);
    await sink.deliver({ ...call, revision: 2, data: { ...call.data, call_outcome: 'order cancelled' } }, context());
    expect(zoho.notes).toHaveLength(1);
    expect(zoho.notes[0]!.Note_Content).toMatch(/^Outcome: order cancelled\n[\s\S]*revision 2$/);
    await sink.deliver(call, context());
    expect(zoho.notes[0]!.Note_Content).toMatch(/^Outcome: order cancelled/);
    expect(apiRequests().filter((r) => r.path.startsWith('/crm/v6/Notes'))).toHaveLength(2);
  });

  it('writes to Leads when told, with the map adding and replacing fields by their API names', async () => {
    const options = {
      module: 'Leads',
      map: { Lead_Source: 'Voice AI', Title: '{{ crm_stage }}', Last_Name: '{{ last_name }} ({{ hook }})' },
    };
    const call = record();
    await (await open(options)).deliver(call, context());
    expect(zoho.records.Leads).toEqual([
      expect.objectContaining({ Lead_Source: 'Voice AI', Title: 'hot', Last_Name: 'Verma (end-of-call)' }),
    ]);
    expect(zoho.records.Contacts).toHaveLength(0);
    expect(zoho.notes[0]).toMatchObject({ Parent_Id: { module: { api_name: 'Leads' } } });
  });

  it('refuses a call with neither email nor phone at once', async () => {
    const err = await failure(
      (await open()).deliver(record({ email_address: undefined, phone_number: undefined }), context()),
    );
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe(
      'the record has neither email_address nor a valid phone_number: no way to find or create the caller in Zoho CRM',
    );
    expect(zoho.requests).toHaveLength(0);
  });

  it('adds nothing twice after a reply lost once the note was made', async () => {
    const sink = await open();
    const call = record();
    zoho.failNext(1, { match: (r) => r.path === '/crm/v6/Notes', lost: true });
    expect(await failure(sink.deliver(call, context()))).toBeInstanceOf(RetryableError);
    expect(zoho.notes).toHaveLength(1);
    await sink.deliver(call, context());
    expect(zoho.notes).toHaveLength(1);
    expect(zoho.records.Contacts).toHaveLength(1);
  });
});
