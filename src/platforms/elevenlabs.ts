import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { at, dayIn, definePlatform, objectAt, present, sameText } from './platform.js';

/**
 * ElevenLabs Agents (docs/platforms/elevenlabs.md, docs/reference.md#other-voice-platforms). A workspace webhook gets
 * three post-call events (https://elevenlabs.io/docs/eleven-agents/workflows/post-call-webhooks): the one stored is
 * `type = "post_call_transcription"`, the conversation as the GET Conversation API returns it; `post_call_audio` (the
 * call's MP3 in base64, megabytes of it, sent chunked) and `call_initiation_failure` (a call that never connected) are
 * answered `ignored`.
 *
 * A request is authenticated by `ElevenLabs-Signature: t=<unix s>,v0=<hex>`, the HMAC-SHA256 under the webhook's
 * secret of `<t>.<raw body>` (https://elevenlabs.io/docs/eleven-api/resources/webhooks#authentication), checked as
 * @elevenlabs/elevenlabs-js 2.73 checks it (`webhooks.constructEvent`,
 * https://github.com/elevenlabs/elevenlabs-js/blob/main/src/wrapper/webhooks.ts): the first `t=` and the first `v0=`
 * of the comma-separated header, a signature no older than 30 minutes (one dated in the future is accepted: the SDK
 * bounds only the age), and `v0=<lowercase hex>` compared whole. One difference, on the safe side: a `t=` that is not
 * digits is refused here, where the SDK's `Number(t)` is NaN, older than nothing, and passes its age check.
 */

const THIRTY_MINUTES = 30 * 60_000;
const HEADER = 'elevenlabs-signature';
const STORED = 'post_call_transcription';
/** The events whose body is not worth parsing: the audio is tens of MB of base64. */
const SKIPPED = new Set(['post_call_audio']);
/** How far into a body `skipsBody` looks for `"type"`; ElevenLabs writes it first, before `data`. */
const HEAD_BYTES = 4096;

const options = z.strictObject({});
type Options = z.output<typeof options>;

export const elevenlabs = definePlatform<Options>({
  name: 'elevenlabs',
  options,
  // docs/reference.md#other-voice-platforms: an audio event carries the whole call's MP3, in base64.
  bodyLimitBytes: 50 * 1024 * 1024,
  skipsBody: (body) => leadingType(body, SKIPPED),
  verify({ header, body }, secret, _options, now) {
    const given = header(HEADER);
    if (given === undefined || given === '') return 'no ElevenLabs-Signature header';
    const parts = given.split(',');
    const timestamp = parts.find((part) => part.startsWith('t='))?.slice(2);
    const signature = parts.find((part) => part.startsWith('v0='));
    if (!timestamp || !signature) return 'no t= and v0= in ElevenLabs-Signature';
    if (!/^\d{1,12}$/.test(timestamp)) return 'ElevenLabs-Signature t= is not a Unix time in seconds';
    if (Number(timestamp) * 1000 < now - THIRTY_MINUTES) return 'ElevenLabs-Signature older than 30 minutes';
    return sameText(signature, `v0=${hmac(secret, timestamp, body)}`) ? undefined : 'a wrong ElevenLabs-Signature';
  },
  read(payload, { timezone }) {
    const type = at(payload, 'type');
    if (type !== STORED) return { kind: 'ignored', event: typeof type === 'string' ? type : 'unknown' };
    const data = objectAt(payload, 'data');
    const callId = data.conversation_id;
    if (typeof callId !== 'string' || callId === '')
      return { kind: 'ignored', event: `${STORED} without data.conversation_id` };
    const analysis = objectAt(data, 'analysis');
    const metadata = objectAt(data, 'metadata');
    // The number of the other party, whichever way the call went: the caller of an inbound call, the one called by an
    // outbound one; `agent_number` is the agent's own (ConversationHistoryTwilioPhoneCallModel and its SIP trunking
    // and Exotel twins in the SDK). A web or WhatsApp conversation has no phone_call.
    const phoneCall = objectAt(metadata, 'phone_call');
    const started = metadata.start_time_unix_secs;
    const collected = objectAt(analysis, 'data_collection_results');
    const ids = Object.keys(collected);
    // Everything else of `data`, under its own names: what was mapped is taken out, and of each data collection result
    // only its value (its rationale and schema stay).
    const mapped = [
      ['conversation_id'],
      ['metadata', 'call_duration_secs'],
      ['metadata', 'phone_call', 'external_number'],
      ['analysis', 'transcript_summary'],
      ...ids.map((id) => ['analysis', 'data_collection_results', id, 'value']),
    ];
    return {
      kind: 'call',
      callId,
      fields: present({
        ...Object.fromEntries(ids.map((id) => [id, at(collected[id], 'value')])),
        call_id: callId,
        phone_number: phoneCall.external_number,
        call_date: typeof started === 'number' ? dayIn(started * 1000, timezone) : undefined,
        call_duration: metadata.call_duration_secs,
        call_summary: analysis.transcript_summary,
      }),
      rest: mapped.reduce<unknown>(omit, data) as Record<string, unknown>,
    };
  },
  sign(body, secret, _options, now) {
    const timestamp = String(Math.floor(now / 1000));
    return { [HEADER]: `t=${timestamp},v0=${hmac(secret, timestamp, body)}` };
  },
  // ElevenLabs documents no time-out for a webhook's answer; 30 s is assumed. It retries none by default, and never in
  // a HIPAA workspace; a webhook with retries enabled gets up to 5 more tries of a post_call_transcription (at once,
  // 30 s, 2, 8 and 30 minutes) after a 5xx, 408, 429 or a time-out
  // (https://elevenlabs.io/docs/eleven-api/resources/webhooks#retries): each a duplicate here.
  sender: { timeoutMs: 30_000, retries: 0 },
  sample(call) {
    // The post_call_transcription alone (https://elevenlabs.io/docs/eleven-agents/workflows/post-call-webhooks): the
    // audio event is sent only with "Send audio data" on, which docs/platforms/elevenlabs.md says to leave off. Each
    // data collection item is the analysis's value under its identifier; ElevenLabs has no sentiment of its own, so
    // the agent collects one, as Vapi's structured data does. A call without the caller's number is a conversation in
    // the web widget: no phone_call.
    const start = Math.floor(call.startedAt / 1000);
    const collected = {
      ...call.data,
      ...(call.sentiment !== undefined && { sentiment_analysis: call.sentiment }),
    };
    const phoneCall = call.phoneNumber !== undefined && {
      phone_call: {
        type: 'twilio',
        direction: call.direction,
        phone_number_id: 'phnum_simulated',
        agent_number: call.agentNumber,
        external_number: call.phoneNumber,
        call_sid: `CA-${call.callId}`,
      },
    };
    return [
      {
        type: STORED,
        event_timestamp: Math.floor(call.endedAt / 1000) + 2,
        data: {
          agent_id: 'agent_simulated',
          agent_name: 'Simulated agent',
          conversation_id: call.callId,
          status: 'done',
          user_id: null,
          transcript: call.transcript.map((t) => ({
            role: t.role,
            message: t.text,
            tool_calls: [],
            tool_results: [],
            feedback: null,
            time_in_call_secs: t.secondsFromStart,
          })),
          metadata: {
            start_time_unix_secs: start,
            call_duration_secs: Math.round((call.endedAt - call.startedAt) / 1000),
            cost: 400,
            termination_reason: call.direction === 'inbound' ? 'Client disconnected' : 'end_call tool was called.',
            ...phoneCall,
          },
          analysis: {
            evaluation_criteria_results: {},
            data_collection_results: Object.fromEntries(
              Object.entries(collected).map(([id, value]) => [
                id,
                { data_collection_id: id, value, rationale: 'Said during the call.' },
              ]),
            ),
            call_successful: 'success',
            transcript_summary: call.summary,
          },
          has_audio: true,
          has_user_audio: true,
          has_response_audio: true,
        },
      },
    ];
  },
});

function hmac(secret: string, timestamp: string, body: Uint8Array | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The value without the member at `path`, copying only the objects on the way to it; the rest is shared. */
function omit(value: unknown, [key, ...path]: string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key!)) return value;
  const object = value as Record<string, unknown>;
  if (path.length === 0) {
    const { [key!]: _, ...kept } = object;
    return kept;
  }
  return { ...object, [key!]: omit(object[key!], path) };
}

/**
 * The body's `type` when it is one of `names` and is written before any nested value, as ElevenLabs writes it
 * (`{"type": "post_call_audio", "event_timestamp": …, "data": {…}}`); else undefined, and the body is parsed whole.
 * Only the first few KB are decoded: megabytes of audio are never turned into a string.
 */
export function leadingType(body: Uint8Array, names: ReadonlySet<string>): string | undefined {
  const text = new TextDecoder().decode(body.subarray(0, HEAD_BYTES));
  // JSON's own white space (RFC 8259 section 2), a string, and the scalars; an object or array value ends the scan.
  const open = /[ \t\n\r]*\{/y;
  const member =
    /[ \t\n\r]*("(?:[^"\\]|\\.)*")[ \t\n\r]*:[ \t\n\r]*("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)[ \t\n\r]*([,}])/y;
  if (!open.test(text)) return undefined;
  member.lastIndex = open.lastIndex;
  for (let found = member.exec(text); found; found = member.exec(text)) {
    const [, key, value, end] = found;
    if (parsed(key!) === 'type') {
      const type = parsed(value!);
      return typeof type === 'string' && names.has(type) ? type : undefined;
    }
    if (end === '}') return undefined;
  }
  return undefined;
}

function parsed(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
