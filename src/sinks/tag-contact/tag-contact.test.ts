import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeService, startFakeService } from '../../../test/fakes/calling-service.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { samePhone } from '../shared/phone.js';
import { tagContact, tagContactSink } from './tag-contact.js';

const log = pino({ level: 'silent' });
const record = (data: CallRecord['data'] = {}): CallRecord => ({
  id: '019a0000-0000-7000-8000-000000000001',
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
    call_outcome: 'callback requested',
    call_summary: 'Wants a call on Monday about the kettle.',
    ...data,
  },
});
const context = () => ({ attempt: 1, idempotencyKey: 'x:followup', signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

let service: FakeService;
beforeAll(async () => {
  service = await startFakeService({
    state: { tags: [{ id: 'follow-up', name: 'Follow-up', description: 'next campaign' }] },
  });
});
afterAll(() => service?.close());

const open = (options: Record<string, unknown> = {}) =>
  tagContactSink.open(
    tagContactSink.options.parse({
      api_url: service.baseUrl,
      api_key: service.apiKey,
      tag_id: 'follow-up',
      ...options,
    }),
    { name: 'followup', dataDir: '/nonexistent', log },
  );

describe('tag-contact sink', () => {
  it('adds the caller to the tag with the fields of spec 2.6, then never again', async () => {
    const sink = await open({ lead_status: 'open', lifecycle_stage: 'lead' });
    await sink.deliver(record(), context());
    await sink.deliver(record(), context());
    expect(service.state.tagContacts['follow-up']).toEqual([
      expect.objectContaining({
        first_name: 'Asha',
        last_name: 'Verma',
        phone: '+919812345678',
        email: 'asha@example.in',
        lead_status: 'open',
        lifecycle_stage: 'lead',
        description: 'callback requested — Wants a call on Monday about the kettle.',
      }),
    ]);
    const created = service.requests.filter((r) => r.path === '/tag/contact/create');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      method: 'POST',
      query: { id: 'follow-up' },
      headers: { 'x-api-key': service.apiKey },
    });
  });

  it('recognises a contact typed in another format as the same caller', async () => {
    service.state.tagContacts['follow-up'] = [{ id: 'k1', first_name: 'Ravi', phone: '098765 43210' }];
    await (await open()).deliver(record({ first_name: 'Ravi', phone_number: '+919876543210' }), context());
    expect(service.state.tagContacts['follow-up']).toHaveLength(1);
  });

  it("compares numbers by their digits, or as national numbers of the caller's country", async () => {
    service.state.tagContacts['follow-up'] = [{ id: 'k2', first_name: 'Kiran', phone: '91 98111-44455' }];
    await (await open()).deliver(record({ first_name: 'Kiran', phone_number: '+919811144455' }), context());
    expect(service.state.tagContacts['follow-up']).toHaveLength(1);
    expect(samePhone('+1 (415) 555-0100', '+14155550100')).toBe(true);
    expect(samePhone('098111 44455', '+919811144455')).toBe(true);
    expect(samePhone('+919811144456', '+919811144455')).toBe(false);
    expect(samePhone(undefined, '+919811144455')).toBe(false);
    expect(samePhone('n/a', '+919811144455')).toBe(false);
  });

  it('keeps the note short: outcome, then summary, at most 500 characters', () => {
    for (const call_outcome of ['callback requested', 'callbacks requested']) {
      const long = tagContact(record({ call_outcome, call_summary: '🙂'.repeat(400) })).description!;
      expect(long.length).toBeLessThanOrEqual(500);
      expect(long).toMatch(/^callbacks? requested — 🙂+…$/u);
    }
    expect(tagContact(record({ call_outcome: '', call_summary: 'Only this.' })).description).toBe('Only this.');
    expect(tagContact(record({ call_outcome: '', call_summary: '' })).description).toBeUndefined();
  });

  it('passes the delivery signal on: an aborted attempt rejects with its reason and adds nobody', async () => {
    const before = service.requests.length;
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    const err = await failure(
      (await open()).deliver(record({ phone_number: '+919800000001' }), { ...context(), signal: controller.signal }),
    );
    expect(err.message).toBe('shutting down');
    expect(service.requests.length).toBe(before);
  });

  it('refuses a call without a phone number at once', async () => {
    const { phone_number: _, ...data } = record().data;
    const err = await failure((await open()).deliver({ ...record(), data }, context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe('the record has no phone_number to add to the tag');
  });

  it('ends at once on a refused key, and retries when the service is down', async () => {
    const wrong = await tagContactSink.open(
      tagContactSink.options.parse({ api_url: service.baseUrl, api_key: 'wrong-key-0123', tag_id: 'follow-up' }),
      { name: 'f', dataDir: '/x', log },
    );
    const refused = await failure(wrong.deliver(record(), context()));
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused).toMatchObject({ status: 401, message: 'HTTP 401: Invalid API key' });
    expect(refused.message).not.toContain('wrong-key-0123');

    service.failNext(1, 503);
    expect(await failure((await open()).deliver(record({ phone_number: '+919811122233' }), context()))).toBeInstanceOf(
      RetryableError,
    );
    service.failNext(1, 429);
    expect(await failure((await open()).deliver(record({ phone_number: '+919811122233' }), context()))).toBeInstanceOf(
      RetryableError,
    );
  });

  it('retries when the service asks it to, no sooner', async () => {
    service.failNext(1, 429, '120');
    const limited = await failure((await open()).deliver(record({ phone_number: '+919811122233' }), context()));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited).toMatchObject({ status: 429, retryAfterMs: 120_000 });
    service.failNext(1, 503);
    expect(await failure((await open()).deliver(record({ phone_number: '+919811122233' }), context()))).toMatchObject({
      status: 503,
      retryAfterMs: undefined,
    });
  });

  it('ends at once when the tag does not exist', async () => {
    const err = await failure((await open({ tag_id: 'no-such-tag' })).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status: 404 });
  });

  it('checks its options at start-up, naming the one that is wrong', () => {
    const parse = (options: Record<string, unknown>) =>
      tagContactSink.options.safeParse({ api_url: service.baseUrl, api_key: 'k', tag_id: 't', ...options });
    expect(parse({}).success).toBe(true);
    expect(parse({ api_url: 'https://calls.example.com/v2' }).error?.issues[0]?.message).toBe(
      'api_url must end in /api/v1 (spec section 9)',
    );
    expect(parse({ tag_id: '' }).error?.issues[0]?.path).toEqual(['tag_id']);
    expect(parse({ tag: 'x' }).error?.issues[0]?.code).toBe('unrecognized_keys');
  });
});
