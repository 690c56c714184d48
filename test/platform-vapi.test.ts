import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminApi, startServer, type TestServer } from './helpers/server.js';

/**
 * A hook Vapi sends to (docs/reference.md#other-voice-platforms), end to end over real HTTP: its end-of-call report
 * stored and mapped, a resend a duplicate, every other server message ignored, and each of the server credentials a
 * hook may name checked as Vapi sends it, with nothing kept for a request Vapi did not send.
 *
 * Vapi's documented authentication (https://docs.vapi.ai/server-url/server-authentication, and the
 * `HMACAuthenticationPlan` / `BearerAuthenticationPlan` of its API reference):
 * - Bearer Token credential: "Header Name: The header to send the token in (default: `Authorization`)", "Include
 *   Bearer Prefix", so "Vapi will send your token as `Authorization: Bearer your-token`"; the legacy inline `secret`
 *   is the same credential "with header `X-Vapi-Secret` and no Bearer prefix".
 * - HMAC credential: `algorithm` sha256 | sha512 (| sha1, which callhook does not take); `signatureHeader` "Defaults to
 *   'x-signature'"; `timestampHeader` "Defaults to 'x-timestamp'"; `payloadFormat` "Use {body} for request body,
 *   {timestamp} for timestamp … Defaults to '{timestamp}.{body}'"; `signatureEncoding` "Defaults to 'hex'".
 * So the HMAC is, with node:crypto, `createHmac(algorithm, secret).update(`${timestamp}.${body}`).digest('hex')`.
 */
function vapiHmac(algorithm: 'sha256' | 'sha512', secret: string, timestamp: string, body: string): string {
  return createHmac(algorithm, secret).update(`${timestamp}.${body}`).digest('hex');
}

const SECRET = 'vapi-server-secret-0123456789abcdef';
const MINUTE = 60_000;

/** Every hook of this file declares the same parameters, so each stored call can be read the same way. */
const PARAMETERS = [
  { identifier: 'call_id', type: 'string' },
  { identifier: 'first_name', type: 'string', required: true },
  { identifier: 'rooms', type: 'number' },
  { identifier: 'wants_breakfast', type: 'boolean' },
  { identifier: 'phone_number', type: 'string', format: 'e164' },
  { identifier: 'call_date', type: 'string', format: 'date' },
  { identifier: 'call_duration', type: 'number' },
  { identifier: 'call_summary', type: 'string' },
  { identifier: 'recording_url', type: 'string', format: 'url' },
];
const vapiHook = (options: Record<string, unknown> = {}) => ({
  platform: 'vapi',
  secret: SECRET,
  parameters: PARAMETERS,
  ...options,
});

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    config: {
      timezone: 'Asia/Kolkata',
      // Every refusal below comes from this one address: more than the default 20 a minute.
      auth_limit: { max: 1000 },
      hooks: {
        vapi: vapiHook({ drop: ['transcript', 'messages'] }),
        'vapi-own-header': vapiHook({ auth: 'secret', header: 'X-Callhook-Token' }),
        'vapi-bearer': vapiHook({ auth: 'bearer' }),
        'vapi-bearer-header': vapiHook({ auth: 'bearer', header: 'X-Api-Token' }),
        'vapi-hmac': vapiHook({ auth: 'hmac' }),
        'vapi-hmac512': vapiHook({
          auth: 'hmac',
          algorithm: 'sha512',
          header: 'X-Vapi-Signature',
          timestamp_header: 'X-Vapi-Timestamp',
        }),
      },
    },
  });
});
afterAll(() => server.close());

/** An end-of-call report as Vapi sends it (https://docs.vapi.ai/server-url/events), made-up values. */
function endOfCallReport(callId: string): { message: Record<string, unknown> } {
  return {
    message: {
      type: 'end-of-call-report',
      timestamp: 1795294055000,
      endedReason: 'customer-ended-call',
      call: { id: callId, orgId: 'org-1', type: 'outboundPhoneCall', status: 'ended' },
      customer: { number: '+1 (415) 555-0134', name: 'Maya' },
      phoneNumber: { number: '+12125550187' },
      // 20:45 UTC is 02:15 the next morning in Asia/Kolkata; 2 min 35.6 s long.
      startedAt: '2026-11-20T20:45:10.000Z',
      endedAt: '2026-11-20T20:47:45.600Z',
      cost: 0.21,
      analysis: {
        summary: 'Maya booked three rooms for the 28th, with breakfast.',
        structuredData: { first_name: ' Maya ', rooms: '3', wants_breakfast: 'yes', notes: 'late arrival' },
        successEvaluation: 'true',
      },
      artifact: {
        recordingUrl: 'https://recordings.example.com/vapi/stay.mp3',
        transcript: 'AI: How many rooms? User: Three, with the mango lassi breakfast.',
        messages: [{ role: 'user', message: 'Three, with the mango lassi breakfast.' }],
      },
    },
  };
}

/** Posts a body to a hook with the headers given (the credential), as Vapi's server request does. */
function send(hook: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/webhooks/${hook}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

const call = async (id: string) => (await adminApi(server, `/calls/${id}`)).body;
/** What a hook has left in the store: its calls and its receipts. */
async function kept(hook: string) {
  const calls = (await adminApi(server, `/calls?hook=${hook}&test_calls=true&limit=500`)).body.calls as unknown[];
  const receipts = (await adminApi(server, `/receipts?hook=${hook}&limit=500`)).body.receipts as { outcome: string }[];
  return { calls: calls.length, receipts: receipts.length, ignored: receipts.filter((r) => r.outcome === 'ignored') };
}

async function expectAccepted(res: Response, callId: string): Promise<string> {
  const reply = await res.json();
  expect(res.status, JSON.stringify(reply)).toBe(200);
  expect(reply).toMatchObject({ status: 'accepted', dedup_key: `call_id:${callId}` });
  return reply.id;
}

/** A refusal: 401 with the Error object, and not a byte of the request kept by the hook. */
async function expectRefused(hook: string, request: () => Promise<Response>): Promise<void> {
  const before = await kept(hook);
  const res = await request();
  expect(res.status).toBe(401);
  expect(await res.json()).toEqual({ error: 401, message: expect.any(String) });
  expect(await kept(hook)).toEqual(before);
}

describe('the end-of-call report', () => {
  let id: string;
  const body = JSON.stringify(endOfCallReport('vapi-call-1'));

  it('is accepted with the secret in x-vapi-secret, keyed on message.call.id', async () => {
    id = await expectAccepted(await send('vapi', body, { 'x-vapi-secret': SECRET }), 'vapi-call-1');
  });

  it('is mapped: structured data typed, the customer in E.164, seconds from startedAt to endedAt, the day in the timezone', async () => {
    const { record } = await call(id);
    expect(record).toMatchObject({ hook: 'vapi', source: 'webhook', platform: 'vapi', problems: [] });
    expect(record.data).toEqual({
      call_id: 'vapi-call-1',
      first_name: 'Maya',
      rooms: 3,
      wants_breakfast: true,
      phone_number: '+14155550134',
      call_date: '2026-11-21',
      call_duration: 156,
      call_summary: 'Maya booked three rooms for the 28th, with breakfast.',
      recording_url: 'https://recordings.example.com/vapi/stay.mp3',
    });
  });

  it('keeps the rest of the message in extra, without what drop names, in the raw request too', async () => {
    const { record, raw } = await call(id);
    const { message } = endOfCallReport('vapi-call-1');
    expect(record.extra).toEqual({
      type: 'end-of-call-report',
      timestamp: message.timestamp,
      endedReason: 'customer-ended-call',
      call: message.call,
      customer: message.customer,
      phoneNumber: message.phoneNumber,
      startedAt: message.startedAt,
      endedAt: message.endedAt,
      cost: 0.21,
      analysis: { summary: 'Maya booked three rooms for the 28th, with breakfast.', successEvaluation: 'true' },
      artifact: { recordingUrl: 'https://recordings.example.com/vapi/stay.mp3' },
      notes: 'late arrival',
    });
    expect(raw.body).not.toContain('mango lassi');
    expect(JSON.parse(raw.body).message.artifact).toEqual({
      recordingUrl: 'https://recordings.example.com/vapi/stay.mp3',
    });
  });

  it('sent again is a duplicate of the first', async () => {
    const res = await send('vapi', body, { 'x-vapi-secret': SECRET });
    expect(await res.json()).toMatchObject({ status: 'duplicate', id, dedup_key: 'call_id:vapi-call-1' });
    expect((await call(id)).duplicates).toBe(1);
  });
});

describe('other server messages', () => {
  it('are answered 200 ignored with a receipt, and no call is stored', async () => {
    const before = await kept('vapi');
    const bodies = [
      { message: { type: 'status-update', status: 'in-progress', call: { id: 'vapi-call-2' } } },
      { message: { type: 'conversation-update', messages: [], call: { id: 'vapi-call-2' } } },
      { message: { type: 'transcript', role: 'user', transcriptType: 'final', transcript: 'Hello' } },
      { message: { type: 'tool-calls', toolCallList: [], call: { id: 'vapi-call-2' } } },
      { message: { type: 'hang', call: { id: 'vapi-call-2' } } },
      { message: { type: 'end-of-call-report', analysis: { summary: 'no call id' } } },
      { type: 'end-of-call-report', call: { id: 'not under message' } },
    ];
    for (const b of bodies) {
      const res = await send('vapi', JSON.stringify(b), { 'x-vapi-secret': SECRET });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ignored' });
    }
    const after = await kept('vapi');
    expect(after.calls).toBe(before.calls);
    expect(after.ignored.length).toBe(before.ignored.length + bodies.length);
  });
});

describe('auth: secret (the default)', () => {
  const body = JSON.stringify(endOfCallReport('vapi-secret-bad'));
  it.each([
    ['a wrong secret', { 'x-vapi-secret': 'not-the-secret' }],
    ['no x-vapi-secret', {}],
    ['the secret as a bearer token', { authorization: `Bearer ${SECRET}` }],
  ])('refuses %s', (_, headers) => expectRefused('vapi', () => send('vapi', body, headers)));

  it('reads the header the hook names instead', async () => {
    const own = JSON.stringify(endOfCallReport('vapi-own-1'));
    await expectAccepted(await send('vapi-own-header', own, { 'x-callhook-token': SECRET }), 'vapi-own-1');
    await expectRefused('vapi-own-header', () => send('vapi-own-header', body, { 'x-vapi-secret': SECRET }));
  });
});

describe('auth: bearer', () => {
  it('accepts Authorization: Bearer <secret>, the scheme in any case', async () => {
    for (const [n, scheme] of [
      [1, 'Bearer'],
      [2, 'bearer'],
    ] as const) {
      const body = JSON.stringify(endOfCallReport(`vapi-bearer-${n}`));
      await expectAccepted(
        await send('vapi-bearer', body, { authorization: `${scheme} ${SECRET}` }),
        `vapi-bearer-${n}`,
      );
    }
  });

  const body = JSON.stringify(endOfCallReport('vapi-bearer-bad'));
  it.each([
    ['a wrong token', { authorization: 'Bearer not-the-secret' }],
    ['the token without the Bearer prefix', { authorization: SECRET }],
    ['the Basic scheme', { authorization: `Basic ${Buffer.from(`vapi:${SECRET}`).toString('base64')}` }],
    ['the secret in x-vapi-secret', { 'x-vapi-secret': SECRET }],
    ['no Authorization', {}],
  ])('refuses %s', (_, headers) => expectRefused('vapi-bearer', () => send('vapi-bearer', body, headers)));

  it('reads the header of the credential when the hook names one (Header Name with the Bearer prefix)', async () => {
    const own = JSON.stringify(endOfCallReport('vapi-bearer-own'));
    await expectAccepted(
      await send('vapi-bearer-header', own, { 'x-api-token': `Bearer ${SECRET}` }),
      'vapi-bearer-own',
    );
    await expectRefused('vapi-bearer-header', () =>
      send('vapi-bearer-header', body, { authorization: `Bearer ${SECRET}` }),
    );
  });
});

describe('auth: hmac', () => {
  const seconds = (ms: number) => String(Math.floor(ms / 1000));
  const hmacHeaders = (body: string, timestamp: string, algorithm: 'sha256' | 'sha512' = 'sha256') => ({
    'x-signature': vapiHmac(algorithm, SECRET, timestamp, body),
    'x-timestamp': timestamp,
  });

  it('accepts the HMAC of {timestamp}.{body}, the timestamp in seconds or in milliseconds, as sent', async () => {
    const inSeconds = JSON.stringify(endOfCallReport('vapi-hmac-s'));
    await expectAccepted(
      await send('vapi-hmac', inSeconds, hmacHeaders(inSeconds, seconds(Date.now()))),
      'vapi-hmac-s',
    );
    const inMs = JSON.stringify(endOfCallReport('vapi-hmac-ms'));
    await expectAccepted(await send('vapi-hmac', inMs, hmacHeaders(inMs, String(Date.now()))), 'vapi-hmac-ms');
    // Four minutes old is within the five.
    const late = JSON.stringify(endOfCallReport('vapi-hmac-late'));
    const fourMinutesAgo = String(Date.now() - 4 * MINUTE);
    await expectAccepted(await send('vapi-hmac', late, hmacHeaders(late, fourMinutesAgo)), 'vapi-hmac-late');
  });

  const body = JSON.stringify(endOfCallReport('vapi-hmac-bad'));
  const now = () => Date.now();
  it.each([
    [
      'a signature with another secret',
      () => ({ ...hmacHeaders(body, seconds(now())), 'x-signature': 'f'.repeat(64) }),
    ],
    ['a body changed after signing', () => hmacHeaders(body.replace('"rooms":"3"', '"rooms":"30"'), seconds(now()))],
    [
      'a timestamp changed after signing',
      () => ({ ...hmacHeaders(body, seconds(now())), 'x-timestamp': seconds(now() + 1000) }),
    ],
    ['a stale timestamp in seconds, signed right', () => hmacHeaders(body, seconds(now() - 6 * MINUTE))],
    ['a stale timestamp in milliseconds, signed right', () => hmacHeaders(body, String(now() - 6 * MINUTE))],
    ['a timestamp 6 minutes ahead, signed right', () => hmacHeaders(body, String(now() + 6 * MINUTE))],
    ['a SHA-512 signature on a SHA-256 hook', () => hmacHeaders(body, seconds(now()), 'sha512')],
    [
      'a base64 signature',
      () => ({
        'x-signature': createHmac('sha256', SECRET)
          .update(`${seconds(now())}.${body}`)
          .digest('base64'),
        'x-timestamp': seconds(now()),
      }),
    ],
    ['no timestamp header', () => ({ 'x-signature': vapiHmac('sha256', SECRET, '', body) })],
    ['no signature header', () => ({ 'x-timestamp': seconds(now()) })],
    ['the secret in x-vapi-secret', () => ({ 'x-vapi-secret': SECRET })],
  ])('refuses %s', (_, headers) => expectRefused('vapi-hmac', () => send('vapi-hmac', body, headers())));

  it('with sha512 and headers of the hook’s own: accepted signed so, refused signed with sha256', async () => {
    const ok = JSON.stringify(endOfCallReport('vapi-hmac512'));
    const t = String(Date.now());
    await expectAccepted(
      await send('vapi-hmac512', ok, {
        'x-vapi-signature': vapiHmac('sha512', SECRET, t, ok),
        'x-vapi-timestamp': t,
      }),
      'vapi-hmac512',
    );
    await expectRefused('vapi-hmac512', () =>
      send('vapi-hmac512', body, { 'x-vapi-signature': vapiHmac('sha256', SECRET, t, body), 'x-vapi-timestamp': t }),
    );
    await expectRefused('vapi-hmac512', () =>
      send('vapi-hmac512', body, { 'x-signature': vapiHmac('sha512', SECRET, t, body), 'x-timestamp': t }),
    );
  });

  it('refused requests were refused for their signature: the same body signed right is accepted', async () => {
    await expectAccepted(await send('vapi-hmac', body, hmacHeaders(body, seconds(Date.now()))), 'vapi-hmac-bad');
  });
});
