import { sign } from 'retell-sdk';
import { symmetric } from 'retell-sdk/lib/webhook_auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, newRunId, withRunId } from '../src/cli/fixtures.js';
import { replayOne } from '../src/cli/replay.js';
import { ADMIN, adminApi, startServer, type TestServer } from './helpers/server.js';

/**
 * A hook Retell AI sends to (docs/reference.md#other-voice-platforms, docs/platforms/retell.md), over real HTTP to a
 * real serve. Bodies are signed by retell-sdk's own `sign` (src/lib/webhook_auth.ts of
 * https://github.com/RetellAI/retell-typescript-sdk: `v=<unix ms>,d=<hex HMAC-SHA256 of body + timestamp>` keyed with
 * the API key; https://docs.retellai.com/features/secure-webhook). The payloads are the webhook's `{event, call}`
 * (https://docs.retellai.com/features/webhook-overview), with made-up values.
 */

const API_KEY = 'key_3f9a1c27e5b84d06a2c1f0e9d8b7a654';
const OTHER_KEY = 'key_0000aaaabbbbccccddddeeeeffff1111';

const PARAMETERS = [
  { identifier: 'call_id', type: 'string', required: true },
  { identifier: 'first_name', type: 'string', required: true },
  { identifier: 'phone_number', type: 'string', required: true },
  { identifier: 'call_date', type: 'string', required: true },
  { identifier: 'call_duration', type: 'number', required: true },
  { identifier: 'call_summary', type: 'string' },
  { identifier: 'sentiment_analysis', type: 'string' },
  { identifier: 'recording_url', type: 'string' },
  { identifier: 'appointment_booked', type: 'boolean' },
  { identifier: 'party_size', type: 'number' },
];

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    config: {
      timezone: 'Asia/Kolkata',
      hooks: {
        // The fixtures' hook: the recommended parameters, nothing dropped.
        retell: { platform: 'retell', secret: API_KEY },
        bookings: { platform: 'retell', secret: API_KEY, parameters: PARAMETERS, drop: ['transcript'] },
      },
    },
  });
});
afterAll(() => server?.close());

let serial = 0;
const callId = () => `call_${newRunId()}${++serial}`;

/** A call_analyzed event for an inbound call that started 2026-03-14 20:00 UTC: 2026-03-15 in Kolkata. */
function analyzed(id: string, call: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event: 'call_analyzed',
    call: {
      call_type: 'phone_call',
      from_number: '+919876543210',
      to_number: '+918041234567',
      direction: 'inbound',
      call_id: id,
      agent_id: 'agent_5c1d9e0b7a',
      agent_version: 2,
      call_status: 'ended',
      metadata: { branch: 'Indiranagar', notes: { transcript: 'NESTED-TRANSCRIPT-MARKER' } },
      start_timestamp: Date.parse('2026-03-14T20:00:00Z'),
      end_timestamp: Date.parse('2026-03-14T20:02:05.600Z'),
      duration_ms: 125_600,
      disconnection_reason: 'user_hangup',
      transcript: 'Agent: Table for how many?\nUser: Four, tomorrow at eight. TRANSCRIPT-MARKER',
      recording_url: `https://dxc03zgurdly9.cloudfront.net/${id}/recording.wav`,
      call_analysis: {
        call_summary: 'Booked a table for four.',
        in_voicemail: false,
        user_sentiment: 'Positive',
        call_successful: true,
        custom_analysis_data: { first_name: 'Meera', appointment_booked: 'Yes', party_size: '4' },
      },
      ...call,
    },
  };
}

/** Posts a body exactly as given, with these headers. */
function send(hook: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/webhooks/${hook}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** Posts an event as Retell does: its JSON, signed now by retell-sdk's `sign` with the key. */
async function deliver(hook: string, event: unknown, key = API_KEY): Promise<Response> {
  const body = JSON.stringify(event);
  return send(hook, body, { 'x-retell-signature': await sign(body, key) });
}

const stored = async (id: string) => {
  const { status, body } = await adminApi(server, `/calls/${encodeURIComponent(id)}`);
  expect(status).toBe(200);
  return body;
};
const callsOf = async (hook: string) =>
  (await adminApi(server, `/calls?hook=${hook}&test_calls=true&limit=500`)).body.calls as unknown[];
const receiptsOf = async (hook: string) =>
  (await adminApi(server, `/receipts?hook=${hook}&limit=500`)).body.receipts as {
    outcome: string;
    status: number;
  }[];

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) return value.flatMap(keysOf);
  return Object.entries(value).flatMap(([key, item]) => [key, ...keysOf(item)]);
}

describe('a retell hook', () => {
  it('accepts a call_analyzed signed by retell-sdk and maps it onto the declared parameters', async () => {
    const id = callId();
    const res = await deliver('bookings', analyzed(id));
    const reply = await res.json();
    expect(res.status).toBe(200);
    expect(reply).toEqual({ status: 'accepted', id: expect.any(String), dedup_key: `call_id:${id}`, problems: [] });

    const { record, raw, receipts } = await stored(reply.id);
    expect(record.platform).toBe('retell');
    expect(record.source).toBe('webhook');
    expect(record.data).toEqual({
      call_id: id,
      first_name: 'Meera',
      // Inbound: the caller is from_number.
      phone_number: '+919876543210',
      // 20:00 UTC on the 14th is 01:30 on the 15th in Kolkata.
      call_date: '2026-03-15',
      call_duration: 126,
      call_summary: 'Booked a table for four.',
      sentiment_analysis: 'Positive',
      recording_url: `https://dxc03zgurdly9.cloudfront.net/${id}/recording.wav`,
      appointment_booked: true,
      party_size: 4,
    });
    // The rest of the call under its own names; `drop: [transcript]` took out both transcripts.
    expect(record.extra).toEqual({
      call_type: 'phone_call',
      from_number: '+919876543210',
      to_number: '+918041234567',
      direction: 'inbound',
      agent_id: 'agent_5c1d9e0b7a',
      agent_version: 2,
      call_status: 'ended',
      metadata: { branch: 'Indiranagar', notes: {} },
      start_timestamp: Date.parse('2026-03-14T20:00:00Z'),
      end_timestamp: Date.parse('2026-03-14T20:02:05.600Z'),
      duration_ms: 125_600,
      disconnection_reason: 'user_hangup',
      call_analysis: { in_voicemail: false, call_successful: true },
    });
    // Nor does the raw request keep it, or the receipt.
    expect(JSON.parse(raw.body).call.call_id).toBe(id);
    const everything = JSON.stringify({ record, raw, receipts });
    expect(keysOf(JSON.parse(raw.body))).not.toContain('transcript');
    expect(everything).not.toContain('TRANSCRIPT-MARKER');
  });

  it('takes the number called when outbound, and the duration from the timestamps without duration_ms', async () => {
    const id = callId();
    const event = analyzed(id, {
      direction: 'outbound',
      from_number: '+918041234567',
      to_number: '+447911123456',
      duration_ms: undefined,
      start_timestamp: Date.parse('2026-03-14T09:00:00Z'),
      end_timestamp: Date.parse('2026-03-14T09:00:59.400Z'),
    });
    const reply = await (await deliver('bookings', event)).json();
    const { record } = await stored(reply.id);
    expect(record.data).toMatchObject({ phone_number: '+447911123456', call_duration: 59, call_date: '2026-03-14' });
    expect(record.extra.duration_ms).toBeUndefined();
  });

  it('takes Retell’s retry (the same body, signed again) as a duplicate, keeping neither transcript', async () => {
    const id = callId();
    const event = analyzed(id);
    const first = await (await deliver('bookings', event)).json();
    expect(first.status).toBe('accepted');
    const res = await deliver('bookings', event);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'duplicate', id: first.id, dedup_key: `call_id:${id}` });

    const { receipts, duplicates } = await stored(first.id);
    expect(duplicates).toBe(1);
    expect(receipts.map((r: { outcome: string }) => r.outcome).sort()).toEqual(['accepted', 'duplicate']);
    expect(JSON.stringify(receipts)).not.toContain('TRANSCRIPT-MARKER');
  });

  it('answers call_started and call_ended ignored, with a receipt and nothing stored', async () => {
    const calls = (await callsOf('bookings')).length;
    const ignoredBefore = (await receiptsOf('bookings')).filter((r) => r.outcome === 'ignored').length;
    for (const event of ['call_started', 'call_ended']) {
      const { call } = analyzed(callId(), { call_analysis: undefined }) as { call: Record<string, unknown> };
      const res = await deliver('bookings', { event, call });
      expect(res.status, event).toBe(200);
      expect(await res.json(), event).toEqual({ status: 'ignored' });
    }
    expect(await callsOf('bookings')).toHaveLength(calls);
    const ignored = (await receiptsOf('bookings')).filter((r) => r.outcome === 'ignored');
    expect(ignored).toHaveLength(ignoredBefore + 2);
    expect(ignored.every((r) => r.status === 200)).toBe(true);
  });

  describe('refuses with 401 and keeps nothing', () => {
    const body = () => JSON.stringify(analyzed(callId()));
    const now = () => Date.now();
    const cases: [string, () => Promise<[string, Record<string, string>]>][] = [
      ['signed with another key', async () => [body(), { 'x-retell-signature': await sign(body(), OTHER_KEY) }]],
      [
        'a body changed after it was signed',
        async () => {
          const original = body();
          return [original.replace('"Meera"', '"Meena"'), { 'x-retell-signature': await sign(original, API_KEY) }];
        },
      ],
      [
        'a signature 6 minutes old',
        async () => {
          const text = body();
          return [text, { 'x-retell-signature': await symmetric.sign(text, API_KEY, now() - 6 * 60_000) }];
        },
      ],
      [
        'a signature 6 minutes ahead',
        async () => {
          const text = body();
          return [text, { 'x-retell-signature': await symmetric.sign(text, API_KEY, now() + 6 * 60_000) }];
        },
      ],
      ['no x-retell-signature', async () => [body(), {}]],
      ['the API key as a bearer token instead', async () => [body(), { authorization: `Bearer ${API_KEY}` }]],
      [
        'a signature without its timestamp',
        async () => {
          const text = body();
          const signed = await sign(text, API_KEY);
          return [text, { 'x-retell-signature': signed.replace(/^v=\d+,/, '') }];
        },
      ],
      [
        'its parts swapped',
        async () => {
          const text = body();
          const [v, d] = (await sign(text, API_KEY)).split(',');
          return [text, { 'x-retell-signature': `${d},${v}` }];
        },
      ],
      [
        'a digest cut short',
        async () => {
          const text = body();
          return [text, { 'x-retell-signature': (await sign(text, API_KEY)).slice(0, -2) }];
        },
      ],
      [
        'a timestamp that is not a number',
        async () => [body(), { 'x-retell-signature': `v=soon,d=${'ab'.repeat(32)}` }],
      ],
    ];

    it.each(cases)('%s', async (_name, make) => {
      const [calls, receipts] = [(await callsOf('bookings')).length, (await receiptsOf('bookings')).length];
      const [text, headers] = await make();
      const res = await send('bookings', text, headers);
      expect(res.status).toBe(401);
      const reply = await res.text();
      // The Error object, saying what was wrong with the signature, never the key.
      expect(JSON.parse(reply)).toEqual({ error: 401, message: expect.stringContaining('x-retell-signature') });
      expect(reply).not.toContain(API_KEY);
      expect(await callsOf('bookings')).toHaveLength(calls);
      expect(await receiptsOf('bookings')).toHaveLength(receipts);
    });

    it('while a signature 4 minutes old, either way, is accepted (the window is 5 minutes)', async () => {
      for (const skew of [-4 * 60_000, 4 * 60_000]) {
        const text = body();
        const res = await send('bookings', text, {
          'x-retell-signature': await symmetric.sign(text, API_KEY, now() + skew),
        });
        expect(res.status, String(skew)).toBe(200);
      }
    });
  });
});

describe('fixtures/retell', () => {
  const fixtures = loadFixtures(['fixtures/retell']);

  it('are Retell cases, named NN-name.json, each sent to the retell hook', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(6);
    for (const { file, fixture } of fixtures) {
      expect(file).toMatch(/[/\\]\d\d-[a-z0-9-]+\.json$/);
      expect(fixture.request.hook, file).toBe('retell');
      expect(fixture.request.encoding, file).toBe('json');
    }
    const events = new Set(fixtures.map(({ fixture }) => (fixture.request.body as { event: string }).event));
    expect([...events].sort()).toEqual(['call_analyzed', 'call_ended', 'call_started']);
  });

  it('each answers and stores what it says, signed by retell-sdk as Retell would', async () => {
    const run = newRunId();
    const failures: string[] = [];
    for (const { file, fixture: template } of fixtures) {
      const fixture = withRunId(template, run);
      // What buildRequest sends for a json fixture, signed.
      const signature = await sign(JSON.stringify(fixture.request.body), API_KEY);
      fixture.request.headers = { ...fixture.request.headers, 'x-retell-signature': signature };
      const result = await replayOne(file, fixture, { url: server.url, adminToken: ADMIN, print: () => {} });
      failures.push(...result.failures.map((f) => `${file}: ${f}`));
    }
    expect(failures).toEqual([]);
  });
});
