import { createHmac } from 'node:crypto';
import { ElevenLabsClient } from '@elevenlabs/elevenlabs-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures, matches, withRunId } from '../src/cli/fixtures.js';
import { elevenlabs, leadingType } from '../src/platforms/elevenlabs.js';
import type { StoredCall } from '../src/store/admin-queries.js';
import { ADMIN, jsonlRecords, startServer, type TestServer, until } from './helpers/server.js';

/**
 * ElevenLabs' post-call webhooks (docs/platforms/elevenlabs.md) against a real receiver over HTTP. The payloads are
 * the documented ones (https://elevenlabs.io/docs/eleven-agents/workflows/post-call-webhooks) with made-up values; the
 * signature is `ElevenLabs-Signature: t=<unix s>,v0=<hex HMAC-SHA256 of "<t>.<body>">`
 * (https://elevenlabs.io/docs/eleven-api/resources/webhooks#authentication). @elevenlabs/elevenlabs-js is the judge:
 * what `sign` signs must pass its `webhooks.constructEvent`, and `verify` must accept and refuse what it does. The SDK
 * has no signer of its own, so the bodies posted are signed here by the documented algorithm, not by `sign`.
 */

const SECRET = 'wsec_4f0c2b9e7d1a6c3e5b8f0a2d4c6e8b1a9f3e5d7c';
const MINUTE = 60_000;
const sdk = new ElevenLabsClient({ apiKey: 'not-used-by-constructEvent' }).webhooks;

/** The documented signature, computed here on its own: the SDK only verifies. */
function documented(body: string | Buffer, secret: string, seconds: number): string {
  const digest = createHmac('sha256', secret).update(`${seconds}.`).update(body).digest('hex');
  return `t=${seconds},v0=${digest}`;
}
const nowSeconds = () => Math.floor(Date.now() / 1000);

const sdkAccepts = (body: string, header: string | undefined, secret: string) =>
  sdk.constructEvent(body, header as string, secret).then(
    () => true,
    () => false,
  );
const weAccept = (body: string, header: string | undefined, secret: string) =>
  elevenlabs.verify(
    { header: (name) => (name.toLowerCase() === 'elevenlabs-signature' ? header : undefined), body: Buffer.from(body) },
    secret,
    {},
    Date.now(),
  ) === undefined;

/** A post_call_transcription as documented, for the `agent` hook's parameters. */
function transcription(conversationId: string) {
  return {
    type: 'post_call_transcription',
    event_timestamp: 1795297000,
    data: {
      agent_id: 'agent_0901kdemo0bistro',
      conversation_id: conversationId,
      status: 'done',
      user_id: null,
      transcript: [
        { role: 'agent', message: 'Bistro Lumière, how can I help?', time_in_call_secs: 0 },
        { role: 'user', message: 'A table for four on Friday, please. It’s Asha.', time_in_call_secs: 3 },
      ],
      metadata: {
        // 2026-11-21 20:00 UTC: already the 22nd in Asia/Kolkata (01:30).
        start_time_unix_secs: 1795291200,
        call_duration_secs: 184,
        cost: 412,
        phone_call: {
          type: 'twilio',
          direction: 'inbound',
          phone_number_id: 'phnum_0901kdemo',
          agent_number: '+14155550100',
          external_number: '+14155550132',
          stream_sid: 'MZ00000000000000000000000000000009',
          call_sid: 'CA00000000000000000000000000000009',
        },
      },
      analysis: {
        evaluation_criteria_results: {},
        data_collection_results: {
          customer_name: { data_collection_id: 'customer_name', value: 'Asha', rationale: 'She gave her name.' },
          party_size: { data_collection_id: 'party_size', value: '4', rationale: 'A table for four.' },
          wants_callback: { data_collection_id: 'wants_callback', value: 'yes', rationale: 'She asked for one.' },
          allergies: { data_collection_id: 'allergies', value: null, rationale: 'None mentioned.' },
        },
        call_successful: 'success',
        transcript_summary: 'Asha booked a table for four on Friday.',
      },
      conversation_initiation_client_data: { dynamic_variables: { system__caller_id: '+14155550132' } },
      has_audio: true,
    },
  };
}

describe('the signature, judged by @elevenlabs/elevenlabs-js', () => {
  const bodies = [
    JSON.stringify(transcription('conv_sign_1')),
    '{"type":"post_call_transcription","data":{"conversation_id":"conv_ü_日本語_🎧"}}',
  ];

  it('what sign signs passes webhooks.constructEvent, now and 29 minutes ago, and fails it 31 minutes ago', async () => {
    for (const body of bodies) {
      for (const [age, passes] of [
        [0, true],
        [29 * MINUTE, true],
        [31 * MINUTE, false],
      ] as const) {
        const headers = elevenlabs.sign(body, SECRET, {}, Date.now() - age);
        expect(Object.keys(headers)).toEqual(['elevenlabs-signature']);
        const header = headers['elevenlabs-signature']!;
        expect(header).toMatch(/^t=\d{10},v0=[0-9a-f]{64}$/);
        expect(await sdkAccepts(body, header, SECRET), `${age} ms old`).toBe(passes);
        expect(await sdkAccepts(body, header, `${SECRET}x`)).toBe(false);
      }
    }
  });

  it('verify accepts and refuses exactly what constructEvent does, a timestamp in the future included', async () => {
    const body = bodies[0]!;
    const t = nowSeconds();
    const v0 = (seconds: number, secret = SECRET, signed = body) => documented(signed, secret, seconds).split(',')[1]!;
    const cases: [string, string | undefined][] = [
      ['signed now', documented(body, SECRET, t)],
      ['10 minutes ahead', documented(body, SECRET, t + 600)],
      ['a day ahead (the SDK bounds only the age)', documented(body, SECRET, t + 86_400)],
      ['29 minutes old', documented(body, SECRET, t - 29 * 60)],
      ['31 minutes old', documented(body, SECRET, t - 31 * 60)],
      ['v0 before t', `${v0(t)},t=${t}`],
      ['an unknown part after', `${documented(body, SECRET, t)},v1=deadbeef`],
      ['a space after the comma', `t=${t}, ${v0(t)}`],
      ['the hex in capitals', `t=${t},v0=${v0(t).slice(3).toUpperCase()}`],
      ['a wrong v0 first', `t=${t},v0=${'0'.repeat(64)},${v0(t)}`],
      ['the first t is the one signed', `t=${t},${v0(t)},t=${t + 1}`],
      ['another t first', `t=${t + 1},t=${t},${v0(t)}`],
      ['a wrong secret', documented(body, `${SECRET}x`, t)],
      ['another body', `t=${t},${v0(t, SECRET, `${body} `)}`],
      ['no v0', `t=${t}`],
      ['no t', v0(t)],
      ['empty', ''],
      ['absent', undefined],
      ['garbage', 'sha256=abc'],
    ];
    const accepted: string[] = [];
    for (const [name, header] of cases) {
      const judged = await sdkAccepts(body, header, SECRET);
      expect(weAccept(body, header, SECRET), name).toBe(judged);
      if (judged) accepted.push(name);
    }
    expect(accepted).toEqual([
      'signed now',
      '10 minutes ahead',
      'a day ahead (the SDK bounds only the age)',
      '29 minutes old',
      'v0 before t',
      'an unknown part after',
      'the first t is the one signed',
    ]);
    // The one difference, on the safe side: the SDK's Number('soon') is NaN, never older than the window, so it accepts
    // a signed t that is no time at all; that is refused here.
    const notATime = `t=soon,v0=${createHmac('sha256', SECRET).update(`soon.${body}`).digest('hex')}`;
    expect(await sdkAccepts(body, notATime, SECRET)).toBe(true);
    expect(weAccept(body, notATime, SECRET)).toBe(false);
  });
});

describe('skipsBody', () => {
  const audio = new Set(['post_call_audio']);
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('reads the type off the first bytes when it comes before data, and nothing else', () => {
    expect(leadingType(bytes('{"type": "post_call_audio", "event_timestamp": 1, "data": {'), audio)).toBe(
      'post_call_audio',
    );
    expect(leadingType(bytes('\r\n { "event_timestamp" : 1.5e9 , "x":null,"type":"post_call_audio"}'), audio)).toBe(
      'post_call_audio',
    );
    expect(leadingType(bytes('{"type":"post_call_transcription","data":{}}'), audio)).toBeUndefined();
    expect(leadingType(bytes('{"data":{"type":"post_call_audio"},"type":"post_call_audio"}'), audio)).toBeUndefined();
    expect(leadingType(bytes('{"typ\\u0065":"post_call_audio"}'), audio)).toBe('post_call_audio');
    expect(leadingType(bytes('["type","post_call_audio"]'), audio)).toBeUndefined();
    expect(leadingType(bytes(`{"pad":"${'a'.repeat(5000)}","type":"post_call_audio"}`), audio)).toBeUndefined();
    expect(leadingType(bytes('{"type":"post_call_audio'), audio)).toBeUndefined();
  });
});

describe('an ElevenLabs hook over HTTP', () => {
  let server: TestServer;
  const parameters = [
    { identifier: 'customer_name', type: 'string', required: true },
    { identifier: 'party_size', type: 'number' },
    { identifier: 'wants_callback', type: 'boolean' },
    { identifier: 'allergies', type: 'string' },
    { identifier: 'phone_number', type: 'string', format: 'e164' },
    { identifier: 'call_date', type: 'string', format: 'date' },
    { identifier: 'call_duration', type: 'number' },
    { identifier: 'call_summary', type: 'string' },
    { identifier: 'call_id', type: 'string' },
  ];

  beforeAll(async () => {
    server = await startServer({
      config: {
        timezone: 'Asia/Kolkata',
        auth_limit: { max: 1000 },
        hooks: {
          agent: { platform: 'elevenlabs', secret: SECRET, drop: ['transcript'], parameters },
          // The fixtures' hook: the recommended parameters, nothing dropped.
          elevenlabs: { platform: 'elevenlabs', secret: SECRET },
        },
      },
    });
  });
  afterAll(() => server?.close());

  const admin = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  type Receipt = { outcome: string; status: number; size: number; callId: string | null; rawBody?: string };
  const receipts = async (hook: string) =>
    (await admin<{ receipts: Receipt[] }>(`/receipts?hook=${hook}&limit=500&order=desc`)).receipts;
  const calls = async (hook: string) => (await admin<{ calls: StoredCall[] }>(`/calls?hook=${hook}&limit=500`)).calls;
  type Detail = StoredCall & { receipts: Receipt[] };
  const send = (hook: string, body: RequestInit['body'], headers: Record<string, string>) =>
    fetch(`${server.url}/webhooks/${hook}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      // A stream body is sent chunked, as ElevenLabs sends its audio.
      ...(body instanceof ReadableStream && { duplex: 'half' }),
    } as RequestInit);
  const signed = (hook: string, body: string) =>
    send(hook, body, { 'ElevenLabs-Signature': documented(body, SECRET, nowSeconds()) });

  let stored: Detail;

  it('stores a post_call_transcription signed as documented, mapped onto the parameters', async () => {
    const body = JSON.stringify(transcription('conv_e2e_01'));
    const res = await signed('agent', body);
    expect(res.status).toBe(200);
    const reply = (await res.json()) as { status: string; id: string; dedup_key: string; problems: unknown[] };
    expect(reply).toMatchObject({ status: 'accepted', dedup_key: 'call_id:conv_e2e_01', problems: [] });

    stored = await admin<Detail>(`/calls/${reply.id}`);
    const { record, raw } = stored;
    expect(record.platform).toBe('elevenlabs');
    expect(record.source).toBe('webhook');
    expect(record.data).toEqual({
      customer_name: 'Asha',
      party_size: 4,
      wants_callback: true,
      phone_number: '+14155550132',
      call_date: '2026-11-22',
      call_duration: 184,
      call_summary: 'Asha booked a table for four on Friday.',
      call_id: 'conv_e2e_01',
    });
    // The rest of data under its own names, without what was mapped, the values of the results or the transcript.
    expect(record.extra).toEqual({
      agent_id: 'agent_0901kdemo0bistro',
      status: 'done',
      user_id: null,
      metadata: {
        start_time_unix_secs: 1795291200,
        cost: 412,
        phone_call: {
          type: 'twilio',
          direction: 'inbound',
          phone_number_id: 'phnum_0901kdemo',
          agent_number: '+14155550100',
          stream_sid: 'MZ00000000000000000000000000000009',
          call_sid: 'CA00000000000000000000000000000009',
        },
      },
      analysis: {
        evaluation_criteria_results: {},
        data_collection_results: {
          customer_name: { data_collection_id: 'customer_name', rationale: 'She gave her name.' },
          party_size: { data_collection_id: 'party_size', rationale: 'A table for four.' },
          wants_callback: { data_collection_id: 'wants_callback', rationale: 'She asked for one.' },
          allergies: { data_collection_id: 'allergies', rationale: 'None mentioned.' },
        },
        call_successful: 'success',
      },
      conversation_initiation_client_data: { dynamic_variables: { system__caller_id: '+14155550132' } },
      has_audio: true,
    });
    // drop: [transcript] reaches the raw request too; the rest of the body is kept as sent.
    expect(raw.body).not.toContain('"transcript"');
    expect(raw.body).not.toContain('Bistro Lumière');
    const { transcript: _, ...kept } = transcription('conv_e2e_01').data;
    expect(JSON.parse(raw.body)).toEqual({ ...transcription('conv_e2e_01'), data: kept });
    expect(stored.receipts.map((r) => r.rawBody ?? '').join('')).not.toContain('"transcript"');
  });

  it('delivers it without the transcript', async () => {
    const delivered = await until(() => jsonlRecords(server.dataDir).find((r) => r.id === stored.record.id));
    expect(delivered).toMatchObject({ platform: 'elevenlabs', data: { call_id: 'conv_e2e_01' } });
    expect(JSON.stringify(delivered)).not.toContain('"transcript"');
    expect(JSON.stringify(delivered)).not.toContain('Bistro Lumière');
  });

  it('answers a resend of the same conversation as a duplicate of the first call', async () => {
    // Signed afresh, a second later: a retry carries the same body (https://elevenlabs.io/docs/eleven-api/resources/webhooks#retries).
    const body = JSON.stringify(transcription('conv_e2e_01'));
    const res = await send('agent', body, { 'ElevenLabs-Signature': documented(body, SECRET, nowSeconds() + 1) });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'duplicate', id: stored.record.id });
    const detail = await admin<Detail & { duplicates: number }>(`/calls/${stored.record.id}`);
    expect(detail.duplicates).toBe(1);
    const duplicate = detail.receipts.find((r) => r.outcome === 'duplicate');
    expect(duplicate?.rawBody).toBeDefined();
    expect(duplicate?.rawBody).not.toContain('"transcript"');
    expect((await calls('agent')).filter((c) => c.record.data.call_id === 'conv_e2e_01')).toHaveLength(1);
  });

  it('answers post_call_audio of several MB, sent chunked, ignored, with a receipt and no body kept', async () => {
    const head = '{"type":"post_call_audio","event_timestamp":1795297010,"data":{"agent_id":"agent_0901kdemo0bistro",';
    const audio = Buffer.alloc(9 * 1024 * 1024, 'SUQzBAAAAAAAI1RTU0U');
    const body = Buffer.concat([
      Buffer.from(`${head}"conversation_id":"conv_e2e_01","full_audio":"`),
      audio,
      Buffer.from('"}}'),
    ]);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < body.length; at += 1 << 20) controller.enqueue(body.subarray(at, at + (1 << 20)));
        controller.close();
      },
    });
    const before = await calls('agent');
    const res = await send('agent', stream, { 'ElevenLabs-Signature': documented(body, SECRET, nowSeconds()) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ignored' });
    const [receipt] = await receipts('agent');
    expect(receipt).toMatchObject({ outcome: 'ignored', status: 200, size: body.length, callId: null });
    expect(receipt?.rawBody).toBeUndefined();
    expect(await calls('agent')).toHaveLength(before.length);

    // Never parsed: an audio body whose tail is not JSON at all is answered the same, where a parse would be a 400.
    const torn = Buffer.concat([Buffer.from(`${head}"full_audio":"`), audio.subarray(0, 1 << 20)]);
    const again = await send('agent', torn, { 'ElevenLabs-Signature': documented(torn, SECRET, nowSeconds()) });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ status: 'ignored' });
  });

  it('holds a hook to 50 MiB, not the 1 MiB of the calling service’s hooks', async () => {
    const over = Buffer.alloc(50 * 1024 * 1024 + 1, ' ');
    const res = await send('agent', over, { 'ElevenLabs-Signature': documented(over, SECRET, nowSeconds()) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: 413, message: expect.stringContaining(String(50 * 1024 * 1024)) });
  });

  it('answers call_initiation_failure ignored, with a receipt', async () => {
    const body = JSON.stringify({
      type: 'call_initiation_failure',
      event_timestamp: 1795297020,
      data: {
        agent_id: 'agent_0901kdemo0bistro',
        conversation_id: 'conv_e2e_02',
        failure_reason: 'no-answer',
        metadata: { type: 'twilio', body: { CallSid: 'CA00000000000000000000000000000010', CallStatus: 'no-answer' } },
      },
    });
    const res = await signed('agent', body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ignored' });
    const [receipt] = await receipts('agent');
    expect(receipt).toMatchObject({ outcome: 'ignored', status: 200, size: Buffer.byteLength(body) });
    expect((await calls('agent')).some((c) => c.record.data.call_id === 'conv_e2e_02')).toBe(false);
  });

  it('refuses with 401 and keeps nothing: a wrong secret, a changed body, 31 minutes old, no or a malformed header', async () => {
    const body = JSON.stringify(transcription('conv_e2e_refused'));
    const t = nowSeconds();
    const refused: [string, Record<string, string>, string?][] = [
      ['a wrong secret', { 'ElevenLabs-Signature': documented(body, `${SECRET}-old`, t) }],
      ['a body changed after signing', { 'ElevenLabs-Signature': documented(body, SECRET, t) }, body.replace('4', '5')],
      ['31 minutes old', { 'ElevenLabs-Signature': documented(body, SECRET, t - 31 * 60) }],
      ['no header', {}],
      ['the secret as a bearer key', { authorization: `Bearer ${SECRET}` }],
      ['no v0', { 'ElevenLabs-Signature': `t=${t}` }],
      ['no t', { 'ElevenLabs-Signature': documented(body, SECRET, t).split(',')[1]! }],
      ['t not a time', { 'ElevenLabs-Signature': `t=now,${documented(body, SECRET, t).split(',')[1]}` }],
      ['a bare hex digest', { 'ElevenLabs-Signature': documented(body, SECRET, t).split('v0=')[1]! }],
    ];
    const receiptsBefore = (await receipts('agent')).length;
    const callsBefore = (await calls('agent')).length;
    for (const [name, headers, sent = body] of refused) {
      const res = await send('agent', sent, headers);
      expect(res.status, name).toBe(401);
      expect(await res.json(), name).toEqual({ error: 401, message: expect.any(String) });
    }
    expect((await receipts('agent')).length).toBe(receiptsBefore);
    expect((await calls('agent')).length).toBe(callsBefore);
  });

  it('stores and answers every fixture of fixtures/elevenlabs as it says, signed with sign', async () => {
    const run = `r${Date.now().toString(36)}`;
    for (const { file, fixture: raw } of loadFixtures(['fixtures/elevenlabs'])) {
      const fixture = withRunId(raw, run);
      const { hook, headers, body } = fixture.request;
      expect(hook, file).toBe('elevenlabs');
      const text = JSON.stringify(body);
      const signature = Object.keys(headers).length > 0 ? headers : elevenlabs.sign(text, SECRET, {}, Date.now());
      const res = await send(hook, text, signature);
      expect(res.status, file).toBe(fixture.expect.status);
      const reply = (await res.json()) as { id?: string };
      expect(matches(fixture.expect.reply, reply), `${file}: ${JSON.stringify(reply)}`).toBe(true);
      if (fixture.expect.data === undefined) continue;
      const { record } = await admin<StoredCall>(`/calls/${reply.id}`);
      expect(record.data, file).toEqual(fixture.expect.data);
      expect(record.extra, file).toEqual(fixture.expect.extra);
      expect(record.platform, file).toBe('elevenlabs');
    }
  });
});
