import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { dayIn, definePlatform, objectAt, present, sameText } from './platform.js';

/**
 * Bland (docs/reference.md#other-voice-platforms). The `webhook` of a call, or of an inbound number, gets one POST
 * when the call ends: the call object as `GET /v1/calls/{call_id}` returns it (https://docs.bland.ai/api-v1/get/calls-id,
 * https://docs.bland.ai/tutorials/post-call-webhooks). That post-call webhook, a body with `call_id` and `completed`,
 * is the call; any other body is answered `ignored`.
 *
 * A request is signed with the account's webhook signing secret: "it calculates a signature using the HMAC algorithm
 * with the SHA-256 hash function. The signature is then included in the X-Webhook-Signature header", hex
 * (`crypto.createHmac('sha256', key).update(data).digest('hex')`, https://docs.bland.ai/tutorials/webhook-signing).
 * Bland's own example checks `JSON.stringify(req.body)`, the body as Bland wrote it; here it is the bytes as received,
 * before anything is parsed (the same bytes unless something on the way re-formats the JSON, which breaks it).
 */

const SIGNATURE = 'x-webhook-signature';
const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** A Bland hook takes no options: one header, one algorithm. */
const options = z.strictObject({});
type Options = z.output<typeof options>;

export const bland = definePlatform<Options>({
  name: 'bland',
  options,
  // Bland documents no limit; a call object with its transcripts is far smaller.
  bodyLimitBytes: 10 * 1024 * 1024,
  verify({ header, body }, secret) {
    const given = header(SIGNATURE);
    if (given === undefined) return 'no X-Webhook-Signature header';
    const signature = given.trim().toLowerCase();
    if (!HEX_SHA256.test(signature)) return 'an X-Webhook-Signature that is not a hex SHA-256 HMAC';
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    return sameText(signature, expected) ? undefined : 'a wrong X-Webhook-Signature';
  },
  read(payload, { timezone }) {
    const call = objectAt(payload);
    const callId = idOf(call.call_id);
    if (callId === undefined || call.completed === undefined)
      return { kind: 'ignored', event: 'a body without call_id and completed' };
    // The structured data: what the call's analysis_schema extracted, else the call's variables (dynamic_data,
    // custom tools, and Bland's own such as city and now).
    const structured = hasKeys(call.analysis) ? 'analysis' : 'variables';
    const { call_id: _, [structured]: __, summary, recording_url, ...rest } = call;
    return {
      kind: 'call',
      callId,
      fields: present({
        ...objectAt(call, structured),
        call_id: callId,
        // The caller: the number that called an inbound call, the number called by an outbound one.
        phone_number: call.inbound === true ? call.from : call.to,
        call_date: dayIn(call.started_at ?? call.created_at, timezone),
        call_duration: secondsOf(call.call_length),
        call_summary: summary,
        recording_url,
      }),
      rest,
    };
  },
  sign(body, secret) {
    return { [SIGNATURE]: createHmac('sha256', secret).update(body).digest('hex') };
  },
  // Bland's docs describe no timeout and no automatic retry of a post-call webhook: each send is logged (the `metadata` of
  // GET /v1/postcall/webhooks/{call_id}: sent_at, response_code, response_time) and one that failed is sent again only
  // when asked (POST /v1/postcall/webhooks/resend, https://docs.bland.ai/api-v1/post/postcall-webhooks-resend), the
  // same body again: a duplicate. 30 s is callhook's own wait for the reply, not Bland's.
  sender: { timeoutMs: 30_000, retries: 0 },
  sample(call) {
    // The one post-call webhook, the call object of GET /v1/calls/{call_id} (https://docs.bland.ai/api-v1/get/calls-id):
    // `analysis` is what the call's analysis_schema asked for (the sentiment among it, as Vapi's structured data has
    // it), `variables` Bland's own, `call_length` in minutes. A call without the caller's number has the agent's alone.
    const inbound = call.direction === 'inbound';
    const caller = call.phoneNumber;
    const from = inbound ? caller : call.agentNumber;
    const to = inbound ? call.agentNumber : caller;
    const analysis = {
      ...call.data,
      ...(call.sentiment !== undefined && { sentiment_analysis: call.sentiment }),
    };
    const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
    const turns = call.transcript.map((t, i) => ({
      id: i + 1,
      created_at: at(call.startedAt + t.secondsFromStart * 1000),
      text: t.text,
      user: t.role === 'agent' ? 'assistant' : 'user',
      c_id: call.callId,
    }));
    return [
      {
        call_id: call.callId,
        c_id: call.callId,
        call_length: (call.endedAt - call.startedAt) / 60_000,
        batch_id: null,
        to,
        from,
        completed: true,
        created_at: at(call.startedAt - 2_000),
        inbound,
        queue_status: 'complete',
        endpoint_url: 'api.bland.ai',
        // Minutes, Bland's default of 30 unless the call was longer.
        max_duration: Math.max(30, Math.ceil((call.endedAt - call.startedAt) / 60_000)),
        error_message: null,
        variables: { now: new Date(call.startedAt).toUTCString(), from, to, call_id: call.callId },
        answered_by: 'human',
        record: call.recordingUrl !== undefined,
        recording_url: call.recordingUrl,
        metadata: {},
        summary: call.summary,
        price: 0.09,
        started_at: at(call.startedAt),
        end_at: at(call.endedAt),
        call_ended_by: inbound ? 'USER' : 'ASSISTANT',
        analysis_schema: Object.fromEntries(
          Object.entries(analysis).map(([key, value]) => [key, typeof value === 'number' ? 'number' : 'string']),
        ),
        analysis,
        concatenated_transcript: turns.map((t) => `${t.user}: ${t.text}`).join(' \n '),
        transcripts: turns,
      },
    ];
  },
});

/** Bland's call id, a string (documented as a number once): undefined when there is none. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** `call_length`, minutes (0.75), as whole seconds (45); undefined for what is not a length. */
function secondsOf(minutes: unknown): number | undefined {
  const n =
    typeof minutes === 'number'
      ? minutes
      : typeof minutes === 'string' && minutes.trim() !== ''
        ? Number(minutes)
        : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.round(n * 60) : undefined;
}

function hasKeys(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
}
