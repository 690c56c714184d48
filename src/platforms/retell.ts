import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { dayIn, definePlatform, objectAt, present, sameText } from './platform.js';

/**
 * Retell AI (docs/reference.md#other-voice-platforms, docs/platforms/retell.md). Its webhook posts `{event, call}` for
 * `call_started`, `call_ended` and `call_analyzed` (https://docs.retellai.com/features/webhook-overview); only
 * `call_analyzed` carries `call.call_analysis`, so it is the one stored and the others are answered `ignored`. The
 * `call` object is the Get Call API's (https://docs.retellai.com/features/webhook), typed by retell-sdk as
 * `PhoneCallResponse` and `WebCallResponse` (src/resources/call.ts of
 * https://github.com/RetellAI/retell-typescript-sdk).
 *
 * A request is signed in `x-retell-signature: v=<unix ms>,d=<hex>`, HMAC-SHA256 keyed with the account's API key (the
 * one with the webhook badge) over the raw body followed by the timestamp
 * (https://docs.retellai.com/features/secure-webhook). This is retell-sdk's own `verify` (5.x, src/lib/webhook_auth.ts,
 * `symmetric.verify`), check for check: the header is exactly `v=<digits>,d=<hex>` (either case), the timestamp a safe
 * integer read as a number (so `v=0017…` signs `17…`), the digest 64 hex digits, and the time at most 5 minutes from
 * ours either way (5 minutes exactly passes); retell.test.ts holds the two to the same answers. The HMAC is taken over
 * the raw bytes: for a UTF-8 body, the bytes of the SDK's string (a body that is not UTF-8 is no JSON: refused after).
 *
 * Retell names the event in `event` (the overview's sample payload, and the secure-webhook sample code reads it so);
 * the `event_type` one page shows (https://docs.retellai.com/features/post-call-analysis-consumption) is not read.
 */

const FIVE_MINUTES = 5 * 60_000;
const HEADER = 'x-retell-signature';
const SIGNATURE = /^v=(\d+),d=([0-9a-f]+)$/i;
const SHA256_HEX_LENGTH = 64;

export const retell = definePlatform<Record<string, never>>({
  name: 'retell',
  // The API key is the hook's `secret`; Retell has nothing else to choose.
  options: z.strictObject({}) as unknown as z.ZodType<Record<string, never>>,
  // A call_analyzed body carries the transcript four times (`transcript`, word-timed `transcript_object`,
  // `transcript_with_tool_calls` and its scrubbed copy) with the tool calls' arguments and results. Retell ends a call
  // at `max_call_duration_ms`, at most 2 hours: about 18,000 words at 150 a minute, some 50 bytes each with their
  // timings, three word-timed copies, is under 3 MB. 10 MiB leaves room for large tool results.
  bodyLimitBytes: 10 * 1024 * 1024,
  verify({ header, body }, secret, _options, now) {
    const given = header(HEADER);
    if (given === undefined) return `no ${HEADER} header`;
    const match = SIGNATURE.exec(given);
    const sent = Number(match?.[1]);
    const digest = match?.[2];
    if (!match || !Number.isSafeInteger(sent) || digest?.length !== SHA256_HEX_LENGTH)
      return `an ${HEADER} that is not v=<unix ms>,d=<64 hex digits>`;
    if (Math.abs(now - sent) > FIVE_MINUTES) return `an ${HEADER} signed more than 5 minutes away`;
    const expected = createHmac('sha256', secret).update(body).update(String(sent)).digest('hex');
    return sameText(digest.toLowerCase(), expected) ? undefined : `a wrong ${HEADER}`;
  },
  read(payload, { timezone }) {
    const { event } = objectAt(payload);
    if (event !== 'call_analyzed') return { kind: 'ignored', event: String(event ?? 'unknown') };
    const call = objectAt(payload, 'call');
    const callId = call.call_id;
    if (typeof callId !== 'string' || callId === '')
      return { kind: 'ignored', event: 'call_analyzed without call.call_id' };

    // What is moved as it is leaves the rest; what a parameter is worked out from (the numbers by direction, the
    // timestamps, duration_ms) stays in it, since it says more than the parameter does.
    const { call_id: _, call_analysis: __, recording_url, ...callRest } = call;
    const analysis = objectAt(call, 'call_analysis');
    const structured = objectAt(analysis, 'custom_analysis_data');
    const { custom_analysis_data: custom, call_summary, user_sentiment, ...analysisRest } = analysis;
    // Retell's fourth sentiment, "Unknown", is no sentiment: the parameter is left missing rather than refused.
    const sentiment =
      typeof user_sentiment === 'string' && !/^unknown$/i.test(user_sentiment) ? user_sentiment : undefined;
    const keptAnalysis = {
      ...analysisRest,
      // Custom data that is not an object (retell-sdk types it `unknown`) has no names to map: it stays as it came.
      ...(custom !== undefined && custom !== null && structured !== custom && { custom_analysis_data: custom }),
      ...(user_sentiment !== undefined && sentiment === undefined && { user_sentiment }),
    };
    const phone =
      call.direction === 'inbound' ? call.from_number : call.direction === 'outbound' ? call.to_number : undefined;
    return {
      kind: 'call',
      callId,
      fields: {
        // The platform's own values win over a custom analysis field of the same name; where it has none, that
        // field stays.
        ...structured,
        ...present({
          call_id: callId,
          phone_number: phone,
          call_date: dayIn(call.start_timestamp, timezone),
          call_duration: durationSeconds(call),
          call_summary,
          sentiment_analysis: sentiment,
          recording_url,
        }),
      },
      rest: { ...callRest, ...(Object.keys(keptAnalysis).length > 0 && { call_analysis: keptAnalysis }) },
    };
  },
  sign(body, secret, _options, now) {
    const timestamp = Math.trunc(now);
    const digest = createHmac('sha256', secret).update(`${body}${timestamp}`).digest('hex');
    return { [HEADER]: `v=${timestamp},d=${digest}` };
  },
  // "The webhook has a timeout of 10 seconds. If within 10 seconds no success status (2xx) is received, the webhook
  // will be retried, up to 3 times." (https://docs.retellai.com/features/webhook-overview)
  sender: { timeoutMs: 10_000, retries: 3 },
  sample(call) {
    // An agent's default webhook_events, in the order Retell sends them (https://docs.retellai.com/features/webhook):
    // call_started with the basic call information, call_ended with every field of the call object but its analysis,
    // call_analyzed with all of it. A call without the caller's number is a web call (retell-sdk's WebCallResponse:
    // an access token, no numbers, no direction).
    const inbound = call.direction === 'inbound';
    const phone =
      call.phoneNumber === undefined
        ? { call_type: 'web_call', access_token: `eyJhbGciOiJIUzI1NiJ9.simulated.${call.callId}` }
        : {
            call_type: 'phone_call',
            from_number: inbound ? call.phoneNumber : call.agentNumber,
            to_number: inbound ? call.agentNumber : call.phoneNumber,
            direction: call.direction,
          };
    const started = {
      ...phone,
      call_id: call.callId,
      agent_id: 'agent_simulated0000000000',
      agent_version: 1,
      agent_name: 'Simulated agent',
      call_status: 'ongoing',
      start_timestamp: call.startedAt,
    };
    // Each word timed, as transcript_object has them: a third of a second a word from the turn's start.
    const seconds = (n: number) => Math.round(n * 100) / 100;
    const words = (text: string, from: number) =>
      text.split(' ').map((word, i) => ({ word, start: seconds(from + i * 0.3), end: seconds(from + i * 0.3 + 0.25) }));
    const ended = {
      ...started,
      call_status: 'ended',
      end_timestamp: call.endedAt,
      duration_ms: call.endedAt - call.startedAt,
      disconnection_reason: inbound ? 'user_hangup' : 'agent_hangup',
      transcript: call.transcript.map((t) => `${t.role === 'agent' ? 'Agent' : 'User'}: ${t.text}`).join('\n'),
      transcript_object: call.transcript.map((t) => ({
        role: t.role,
        content: t.text,
        words: words(t.text, t.secondsFromStart),
      })),
      recording_url: call.recordingUrl,
    };
    return [
      { event: 'call_started', call: started },
      { event: 'call_ended', call: ended },
      {
        event: 'call_analyzed',
        call: {
          ...ended,
          call_analysis: {
            call_summary: call.summary,
            in_voicemail: false,
            // Retell's own sentiment; "Unknown" when its analysis found none.
            user_sentiment: call.sentiment ?? 'Unknown',
            call_successful: true,
            custom_analysis_data: call.data,
          },
        },
      },
    ];
  },
});

/** `duration_ms` in whole seconds, else the time from `start_timestamp` to `end_timestamp` (both epoch ms). */
function durationSeconds(call: Record<string, unknown>): number | undefined {
  const { duration_ms: ms, start_timestamp: start, end_timestamp: end } = call;
  if (typeof ms === 'number' && Number.isFinite(ms)) return Math.round(ms / 1000);
  if (typeof start === 'number' && typeof end === 'number' && Number.isFinite(end - start))
    return Math.round((end - start) / 1000);
  return undefined;
}
