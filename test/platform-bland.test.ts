import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, loadFixtures, newRunId, withRunId } from '../src/cli/fixtures.js';
import { replayOne } from '../src/cli/replay.js';
import { ADMIN, adminApi, jsonlRecords, startServer, type TestServer, until } from './helpers/server.js';

/**
 * A hook Bland sends to (docs/reference.md#other-voice-platforms), end to end over real HTTP: the post-call webhook
 * signed as Bland signs it, stored and mapped; a resend a duplicate; any other body ignored; a request Bland did not
 * sign refused with nothing kept.
 *
 * Bland's documented algorithm (https://docs.bland.ai/tutorials/webhook-signing): "When Bland sends a webhook, it
 * calculates a signature using the HMAC algorithm with the SHA-256 hash function. The signature is then included in
 * the X-Webhook-Signature header of the request." Its Node.js example:
 *
 *     crypto.createHmac('sha256', key).update(data).digest('hex')
 *
 * with `key` the webhook signing secret of the account (Dev Portal, Account Settings, Keys) and `data` the body.
 */
function blandSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

const SECRET = 'bland-webhook-secret-0123456789abcdef';
const FIXTURE_SECRET = 'bland-fixture-secret-fedcba9876543210';
/** Words only the transcript holds: if they are anywhere on disk, `drop` missed them. */
const SPOKEN = 'Wednesday-the-mango-lassi';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    config: {
      timezone: 'Asia/Kolkata',
      // Every refusal below comes from this one address: more than the default 20 a minute.
      auth_limit: { max: 1000 },
      hooks: {
        bland: { platform: 'bland', secret: FIXTURE_SECRET },
        calls: {
          platform: 'bland',
          secret: SECRET,
          drop: ['transcripts', 'concatenated_transcript'],
          parameters: [
            { identifier: 'call_id', type: 'string' },
            { identifier: 'first_name', type: 'string', required: true },
            { identifier: 'phone_number', type: 'string', format: 'e164' },
            { identifier: 'appointment_date', type: 'string', format: 'date' },
            { identifier: 'rooms', type: 'number' },
            { identifier: 'wants_breakfast', type: 'boolean' },
            { identifier: 'call_date', type: 'string', format: 'date' },
            { identifier: 'call_duration', type: 'number' },
            { identifier: 'call_summary', type: 'string' },
            { identifier: 'recording_url', type: 'string', format: 'url' },
          ],
        },
      },
    },
  });
});
afterAll(() => server.close());

/** A post-call webhook as Bland sends it (https://docs.bland.ai/api-v1/get/calls-id), made-up values. */
function postCall(callId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    call_id: callId,
    c_id: callId,
    call_length: 2.6,
    batch_id: null,
    to: '+1 (415) 555-0134',
    from: '+12125550187',
    request_data: { phone_number: '+14155550134', wait: false },
    completed: true,
    created_at: '2026-11-20T20:44:58.317284+00:00',
    inbound: false,
    queue_status: 'complete',
    variables: { city: 'San Francisco', now_utc: 'Fri, 20 Nov 2026 20:45:10 GMT' },
    answered_by: 'human',
    recording_url: 'https://recordings.example.com/bland/stay.mp3',
    metadata: { source: 'crm', notes: { transcripts: [{ text: SPOKEN }], kept: 'yes' } },
    // 20:45 UTC is 02:15 the next morning in Asia/Kolkata.
    started_at: '2026-11-20T20:45:10+00:00',
    summary: 'Maya booked three rooms for the 28th, with breakfast.',
    price: 0.234,
    analysis: { first_name: ' Maya ', appointment_date: '28/11/2026', rooms: '3', wants_breakfast: 'yes' },
    concatenated_transcript: `user: ${SPOKEN} \n assistant: Three rooms it is.`,
    transcripts: [
      { id: 1, created_at: '2026-11-20T20:45:12.000000+00:00', text: SPOKEN, user: 'user', c_id: callId },
      { id: 2, created_at: '2026-11-20T20:45:15.000000+00:00', text: 'Three rooms it is.', user: 'assistant' },
    ],
    ...overrides,
  };
}

/** Posts a body to a hook as Bland does, signed with `secret` unless `headers` say otherwise. */
function send(body: string, { hook = 'calls', secret = SECRET, headers = {} as Record<string, string> } = {}) {
  return fetch(`${server.url}/webhooks/${hook}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-webhook-signature': blandSignature(secret, body), ...headers },
    body,
  });
}

const call = async (id: string) => (await adminApi(server, `/calls/${id}`)).body;
/** What a hook has left in the store: its calls and its receipts. */
async function kept(hook = 'calls') {
  const calls = (await adminApi(server, `/calls?hook=${hook}&test_calls=true&limit=500`)).body.calls as unknown[];
  const receipts = (await adminApi(server, `/receipts?hook=${hook}&limit=500`)).body.receipts as { outcome: string }[];
  return { calls: calls.length, receipts };
}

/** Every file under a directory, read as text. */
function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      return { path, text: readFileSync(path).toString('latin1') };
    });
}

describe('the post-call webhook', () => {
  let id: string;
  const body = JSON.stringify(postCall('bl-test-1'));

  it('is accepted when signed as Bland signs it, keyed on its call_id', async () => {
    const res = await send(body);
    const reply = await res.json();
    expect(res.status).toBe(200);
    expect(reply).toEqual({ status: 'accepted', id: expect.any(String), dedup_key: 'call_id:bl-test-1', problems: [] });
    id = reply.id;
  });

  it('is mapped: analysis typed, the called number in E.164, minutes in seconds, the day in the timezone', async () => {
    const { record, status } = await call(id);
    expect(status).toBe('accepted');
    expect(record).toMatchObject({ hook: 'calls', source: 'webhook', platform: 'bland', problems: [] });
    expect(record.data).toEqual({
      call_id: 'bl-test-1',
      first_name: 'Maya',
      phone_number: '+14155550134',
      appointment_date: '2026-11-28',
      rooms: 3,
      wants_breakfast: true,
      call_date: '2026-11-21',
      call_duration: 156,
      call_summary: 'Maya booked three rooms for the 28th, with breakfast.',
      recording_url: 'https://recordings.example.com/bland/stay.mp3',
    });
  });

  it('keeps the rest of the payload in extra under its own names, without what drop names at any depth', async () => {
    const { record } = await call(id);
    expect(record.extra).toEqual({
      c_id: 'bl-test-1',
      call_length: 2.6,
      batch_id: null,
      to: '+1 (415) 555-0134',
      from: '+12125550187',
      request_data: { phone_number: '+14155550134', wait: false },
      completed: true,
      created_at: '2026-11-20T20:44:58.317284+00:00',
      inbound: false,
      queue_status: 'complete',
      variables: { city: 'San Francisco', now_utc: 'Fri, 20 Nov 2026 20:45:10 GMT' },
      answered_by: 'human',
      metadata: { source: 'crm', notes: { kept: 'yes' } },
      started_at: '2026-11-20T20:45:10+00:00',
      price: 0.234,
    });
  });

  it('keeps no transcript in the raw request, its receipt, the JSONL file or anywhere in the data dir', async () => {
    const { raw, receipts } = await call(id);
    expect(raw).toMatchObject({ method: 'POST', content_type: 'application/json' });
    const stored = JSON.parse(raw.body);
    expect(stored).not.toHaveProperty('transcripts');
    expect(stored).not.toHaveProperty('concatenated_transcript');
    expect(stored.metadata).toEqual({ source: 'crm', notes: { kept: 'yes' } });
    expect(stored.analysis).toEqual(postCall('bl-test-1').analysis);
    expect(JSON.stringify(receipts)).not.toContain(SPOKEN);
    // The sinks have it too: wait for the JSONL line, then look at every byte on disk.
    await until(() => jsonlRecords(server.dataDir).some((r) => r.id === id));
    const files = filesUnder(server.dataDir);
    expect(files.some((f) => f.text.includes('Maya booked three rooms'))).toBe(true);
    expect(files.filter((f) => f.text.includes(SPOKEN)).map((f) => f.path)).toEqual([]);
  });

  it('sent again (a resend) is a duplicate of the first, counted on it', async () => {
    const res = await send(body);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'duplicate', id, dedup_key: 'call_id:bl-test-1' });
    expect((await call(id)).duplicates).toBe(1);
  });

  it('of an inbound call takes the caller from `from`, and the variables when there is no analysis', async () => {
    const res = await send(
      JSON.stringify(
        postCall('bl-test-in', {
          inbound: true,
          from: '+91 98123 45678',
          to: '+12125550187',
          analysis: null,
          variables: { first_name: 'Arjun', rooms: '2', city: 'Pune' },
        }),
      ),
    );
    const { record } = await call((await res.json()).id);
    expect(record.data).toMatchObject({ first_name: 'Arjun', rooms: 2, phone_number: '+919812345678' });
    expect(record.extra).toMatchObject({ city: 'Pune', analysis: null, from: '+91 98123 45678' });
    expect(record.extra).not.toHaveProperty('variables');
  });
});

describe('other bodies', () => {
  it('are answered 200 ignored with a receipt, and no call is stored', async () => {
    const before = await kept();
    const bodies = [{ call_id: 'bl-event-1', queue_status: 'started' }, { completed: true, summary: 'no id' }, {}];
    for (const b of bodies) {
      const res = await send(JSON.stringify(b));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ignored' });
    }
    const after = await kept();
    expect(after.calls).toBe(before.calls);
    const ignored = (k: typeof before) => k.receipts.filter((r) => r.outcome === 'ignored').length;
    expect(ignored(after)).toBe(ignored(before) + bodies.length);
  });
});

describe('a request Bland did not sign', () => {
  const body = JSON.stringify(postCall('bl-forged'));
  const cases: [string, () => Promise<Response>][] = [
    ['signed with another secret', () => send(body, { secret: 'not-the-bland-secret' })],
    [
      'changed after signing',
      () =>
        send(body.replace('"call_length":2.6', '"call_length":26'), {
          headers: { 'x-webhook-signature': blandSignature(SECRET, body) },
        }),
    ],
    [
      're-formatted after signing',
      () =>
        send(JSON.stringify(JSON.parse(body), null, 2), {
          headers: { 'x-webhook-signature': blandSignature(SECRET, body) },
        }),
    ],
    [
      'without X-Webhook-Signature',
      () =>
        fetch(`${server.url}/webhooks/calls`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
    ],
    ['with an empty X-Webhook-Signature', () => send(body, { headers: { 'x-webhook-signature': '' } })],
    ['with a signature that is not hex', () => send(body, { headers: { 'x-webhook-signature': 'z'.repeat(64) } })],
    [
      'with a prefixed signature',
      () => send(body, { headers: { 'x-webhook-signature': `sha256=${blandSignature(SECRET, body)}` } }),
    ],
    [
      'with a truncated signature',
      () => send(body, { headers: { 'x-webhook-signature': blandSignature(SECRET, body).slice(0, 63) } }),
    ],
    ['with a base64 signature', () => send(body, { headers: { 'x-webhook-signature': base64Signature(body) } })],
  ];

  it.each(cases)('is refused 401 with the Error object when %s, and nothing is kept', async (_, request) => {
    const before = await kept();
    const res = await request();
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 401, message: expect.any(String) });
    expect(await kept()).toEqual(before);
    expect((await adminApi(server, '/calls?q=bl-forged&test_calls=true')).body.calls).toEqual([]);
  });

  it('is accepted once signed right: the refusals above were the signature, not the body', async () => {
    const res = await send(body);
    expect(await res.json()).toMatchObject({ status: 'accepted', dedup_key: 'call_id:bl-forged' });
  });
});

function base64Signature(body: string): string {
  return createHmac('sha256', SECRET).update(body).digest('base64');
}

describe('fixtures/bland', () => {
  const fixtures = loadFixtures(['fixtures/bland']);

  it('are signed afresh with the hook’s secret and answered and stored as each expects', async () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(5);
    const run = newRunId();
    for (const { file, fixture: template } of fixtures) {
      const fixture = signed(withRunId(template, run));
      const result = await replayOne(file, fixture, { url: server.url, adminToken: ADMIN, print: () => {} });
      expect({ file, failures: result.failures }).toEqual({ file, failures: [] });
    }
    // The one with a wrong signature left nothing.
    const forged = (await adminApi(server, `/calls?q=bl-${run}-05&test_calls=true`)).body.calls;
    expect(forged).toEqual([]);
  });
});

/** The fixture with Bland's signature of the body it sends, unless it carries a signature of its own. */
function signed(fixture: Fixture): Fixture {
  const headers = fixture.request.headers;
  if (Object.keys(headers).some((h) => h.toLowerCase() === 'x-webhook-signature')) return fixture;
  const body = JSON.stringify(fixture.request.body);
  return {
    ...fixture,
    request: {
      ...fixture.request,
      headers: { ...headers, 'X-Webhook-Signature': blandSignature(FIXTURE_SECRET, body) },
    },
  };
}
