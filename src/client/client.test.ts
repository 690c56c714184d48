import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeService, startFakeService } from '../../test/fakes/calling-service.js';
import { closedPort } from '../../test/helpers/server.js';
import { type CallingServiceClient, createClient } from './client.js';
import { CallingServiceError } from './errors.js';
import { campaignId, tagContactId, tagId } from './schemas.js';

/** The client against a local fake that answers in the documented shapes (spec sections 2 and 4). */

let service: FakeService;
let client: CallingServiceClient;

beforeAll(async () => {
  service = await startFakeService({
    state: {
      campaigns: [{ id: 'c1', campaigns_name: 'Diwali offers', is_started: true, started_at: '2026-11-20' }],
      audiences: { c1: [{ first_name: 'Asha', phone: '9812345678', call_duration_in_sec: '120' }] },
      tags: [{ id: 't1', name: 'Follow-up', description: 'call back' }],
      knowledgeBases: {
        kb1: Array.from({ length: 45 }, (_, i) => ({
          node_id: `n${i}`,
          node_type: 'faq',
          content: `Q${i}`,
          answer: `A${i}`,
        })),
      },
    },
  });
  client = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, retryDelayMs: 1 });
});
afterAll(() => service?.close());

const rejection = async (promise: Promise<unknown>): Promise<CallingServiceError> => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallingServiceError);
  return err as CallingServiceError;
};

describe('calling service client', () => {
  it('speaks every endpoint of section 4 with the x-api-key header', async () => {
    await client.createDialer({ dialer_type: 'sip', name: 'Office', phone_number: '+918000000000', sid: 'AC1' });
    expect(await client.listDialers()).toEqual([expect.objectContaining({ name: 'Office', dialer_type: 'sip' })]);
    const inbound = await client.createInbound({ name: 'Front desk', assistant_id: 'a1', dialer_id: 'd1' });
    expect(inbound).toMatchObject({ name: 'Front desk', notification: false });
    expect(
      await client.updateInbound(String(inbound.id), {
        name: 'Reception',
        assistant_id: 'a1',
        dialer_id: 'd1',
        notification: true,
      }),
    ).toMatchObject({ name: 'Reception', notification: true });
    const assistant = await client.createAssistant({ name: 'Priya', language: 'hi', ai_model_id: '1' });
    expect(await client.listAssistants()).toHaveLength(1);
    await client.deleteAssistant(String(assistant.id));
    expect(await client.listAssistants()).toEqual([]);
    const [campaign] = await client.listCampaigns();
    expect(await client.campaignAudiences(campaignId(campaign!)!)).toEqual([
      expect.objectContaining({ first_name: 'Asha', call_duration_in_sec: '120' }),
    ]);
    const [tag] = await client.listTags();
    expect(await client.updateTag(tagId(tag!)!, { name: 'Callbacks', description: 'next campaign' })).toMatchObject({
      name: 'Callbacks',
    });
    expect(await client.createTagContact('t1', { first_name: 'Asha', phone: '+919812345678' })).toEqual({
      message: 'Contact created successfully',
    });
    const [contact] = await client.listTagContacts('t1');
    expect(
      await client.updateTagContact(tagContactId(contact!)!, { first_name: 'Asha', lead_status: 'open' }),
    ).toHaveProperty('message');
    expect(await client.createSegment({ name: 'VIP', description: 'big orders' })).toEqual({
      name: 'VIP',
      description: 'big orders',
    });
    expect(await client.listPlayground()).toEqual([]);
    const page = await client.knowledgeBaseChunks('kb1', { page: 3 });
    expect(page.data.pagination).toEqual({ total: 45, total_pages: 3, page: 3, limit: 20 });
    expect(
      await client.updateKnowledgeBaseChunk('kb1', { node_id: 'n1', node_type: 'faq', content: 'Q1?', answer: 'A1!' }),
    ).toMatchObject({ success: true });

    expect(service.requests.every((r) => r.headers['x-api-key'] === service.apiKey)).toBe(true);
    expect(service.requests.find((r) => r.path === '/campaign/audiences')).toMatchObject({
      method: 'POST',
      query: { id: 'c1' },
      body: undefined,
    });
  });

  it('walks the knowledge base 20 entries a page', async () => {
    const before = service.requests.length;
    const entries = await client.allKnowledgeBaseChunks('kb1');
    expect(entries.map((e) => e.node_id)).toEqual(Array.from({ length: 45 }, (_, i) => `n${i}`));
    const pages = service.requests.slice(before);
    expect(pages.map((r) => [r.query.page, r.query.limit])).toEqual([
      ['1', '20'],
      ['2', '20'],
      ['3', '20'],
    ]);
  });

  it('turns the Error object of a refused key into a typed error', async () => {
    const wrong = createClient({ baseUrl: service.baseUrl, apiKey: 'not-the-key' });
    const err = await rejection(wrong.listCampaigns());
    expect(err).toMatchObject({ status: 401, code: 401, message: 'Invalid API key' });
    expect(err.message).not.toContain('not-the-key');
  });

  it('retries a read on 5xx, and never a write', async () => {
    let before = service.requests.length;
    service.failNext(2, 503);
    expect(await client.listTags()).toHaveLength(1);
    expect(service.requests.length - before).toBe(3);
    before = service.requests.length;
    service.failNext(1, 502);
    expect(await client.listTagContacts('t1')).toHaveLength(1);
    expect(service.requests.slice(before).map((r) => r.method)).toEqual(['POST', 'POST']);
    service.failNext(1, 503);
    before = service.requests.length;
    expect(await rejection(client.createSegment({ name: 'X', description: 'Y' }))).toMatchObject({ status: 503 });
    expect(service.requests.length - before).toBe(1);
    service.failNext(1, 500);
    before = service.requests.length;
    expect(await rejection(client.createTagContact('t1', { phone: '+911' }))).toMatchObject({ status: 500 });
    expect(service.requests.length - before).toBe(1);
    service.failNext(3, 500);
    expect(await rejection(client.listTags())).toMatchObject({ status: 500 });
  });

  it('keeps the Retry-After of a refusal on the error, as sent', async () => {
    service.failNext(1, 429, 'Wed, 25 Nov 2026 10:00:00 GMT');
    expect(await rejection(client.createSegment({ name: 'X', description: 'Y' }))).toMatchObject({
      status: 429,
      retryAfter: 'Wed, 25 Nov 2026 10:00:00 GMT',
    });
    service.failNext(1, 429);
    expect(await rejection(client.createSegment({ name: 'X', description: 'Y' }))).toMatchObject({
      status: 429,
      retryAfter: undefined,
    });
  });

  it('does not retry a 4xx read', async () => {
    const before = service.requests.length;
    expect(await rejection(client.campaignAudiences('nope'))).toMatchObject({
      status: 404,
      message: 'campaign not found',
    });
    expect(service.requests.length - before).toBe(1);
  });

  it('gives up on a reply that does not come within the time-out, as status 0', async () => {
    const quick = createClient({ baseUrl: service.baseUrl, apiKey: service.apiKey, timeoutMs: 100, retries: 0 });
    service.failNext(1, 'hang');
    expect(await rejection(quick.listCampaigns())).toMatchObject({
      status: 0,
      message: 'GET /campaign/list: no reply within 100 ms',
    });
  });

  it('reports a service that cannot be reached, as status 0', async () => {
    const nowhere = createClient({
      baseUrl: `http://127.0.0.1:${await closedPort()}/api/v1`,
      apiKey: 'k',
      retryDelayMs: 1,
    });
    expect((await rejection(nowhere.listCampaigns())).message).toMatch(
      /^GET \/campaign\/list: network error: .*ECONNREFUSED/,
    );
  });

  it('refuses a reply that does not have the documented shape', async () => {
    const odd = createClient({
      baseUrl: service.baseUrl,
      apiKey: 'k',
      retries: 0,
      fetch: async () => new Response(JSON.stringify({ campaigns: [] }), { status: 200 }),
    });
    expect(await rejection(odd.listCampaigns())).toMatchObject({
      message:
        'GET /campaign/list: the reply does not have the documented shape (body: Invalid input: expected array, received object)',
    });
  });

  it('keeps fields the spec does not list, and takes a number where it shows a string', async () => {
    const lenient = createClient({
      baseUrl: service.baseUrl,
      apiKey: 'k',
      fetch: async () =>
        new Response(JSON.stringify([{ _id: 42, campaigns_name: 'X', owner: 'ops' }]), { status: 200 }),
    });
    const [campaign] = await lenient.listCampaigns();
    expect(campaign).toMatchObject({ owner: 'ops' });
    expect(campaignId(campaign!)).toBe('42');
  });

  it('checks its options once, naming the one that is wrong', () => {
    expect(() => createClient({ baseUrl: 'https://calls.example.com/api', apiKey: 'k' })).toThrow(
      /^baseUrl: .*ending in \/api\/v1/,
    );
    expect(() => createClient({ baseUrl: 'ftp://calls.example.com/api/v1', apiKey: 'k' })).toThrow(/^baseUrl:/);
    expect(() => createClient({ baseUrl: 'https://calls.example.com/api/v1/', apiKey: ' ' })).toThrow(/^apiKey:/);
    expect(() => createClient({ baseUrl: 'https://calls.example.com/api/v1/', apiKey: 'k', retries: -1 })).toThrow(
      /^retries:/,
    );
  });

  it('never repeats the API key, even when the service echoes it', async () => {
    const echo = createClient({
      baseUrl: service.baseUrl,
      apiKey: 'k-secret-123',
      retries: 0,
      fetch: async () =>
        new Response(JSON.stringify({ error: 401, message: 'Invalid API key k-secret-123' }), { status: 401 }),
    });
    expect(await rejection(echo.listTags())).toMatchObject({
      status: 401,
      code: 401,
      message: 'Invalid API key [api key]',
    });
    const page = createClient({
      baseUrl: service.baseUrl,
      apiKey: 'k',
      retries: 0,
      fetch: async () => new Response('<h1>Bad gateway</h1>', { status: 502 }),
    });
    expect(await rejection(page.listTags())).toMatchObject({ status: 502, code: undefined, message: 'HTTP 502' });
  });

  it('answers a failed inbound update with the 400 of spec section 7', async () => {
    expect(
      await rejection(client.updateInbound('nope', { name: 'x', assistant_id: 'a', dialer_id: 'd' })),
    ).toMatchObject({ status: 400, code: 400 });
  });

  it('stops walking at an empty page when the envelope gives no pagination', async () => {
    const pages: string[] = [];
    const bare = createClient({
      baseUrl: service.baseUrl,
      apiKey: 'k',
      fetch: async (input) => {
        const page = new URL(String(input)).searchParams.get('page')!;
        pages.push(page);
        const chunks = page === '3' ? [] : [{ node_id: `n${page}` }];
        return new Response(JSON.stringify({ success: true, data: { chunks } }), { status: 200 });
      },
    });
    expect((await bare.allKnowledgeBaseChunks('kb')).map((e) => e.node_id)).toEqual(['n1', 'n2']);
    expect(pages).toEqual(['1', '2', '3']);
    await expect(bare.knowledgeBaseChunks('kb', { page: 0 })).rejects.toThrow(/^page:/);
  });

  it('checks the request bodies the spec constrains before sending them', async () => {
    await expect(client.createInbound({ name: 'x', assistant_id: '', dialer_id: 'd' })).rejects.toThrow(
      /^request body: assistant_id/,
    );
  });
});
