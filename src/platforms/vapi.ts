import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { at, dayIn, definePlatform, epochMs, objectAt, present, sameText } from './platform.js';

/**
 * Vapi (docs/reference.md#other-voice-platforms). Its server URL gets every message of a call; the one stored is
 * `message.type = "end-of-call-report"` (https://docs.vapi.ai/server-url/events). A request is authenticated by the
 * server credential the hook names in `auth` (https://docs.vapi.ai/server-url/server-authentication): the secret in
 * `x-vapi-secret` (the default; Vapi's Bearer Token credential with that header and no prefix, what its inline
 * `secret` sent), a bearer token (its Bearer Token credential: `Authorization` by default, a header of the
 * credential's own under `header`), or an HMAC of `{timestamp}.{body}` in hex under `header`, with the timestamp as
 * sent in `timestamp_header` (its HMAC credential, whose `payloadFormat` defaults to '{timestamp}.{body}',
 * `signatureEncoding` to hex, `signatureHeader` to 'x-signature' and `timestampHeader` to 'x-timestamp').
 */

const FIVE_MINUTES = 5 * 60_000;

const DEFAULT_HEADER = { secret: 'x-vapi-secret', bearer: 'authorization', hmac: 'x-signature' } as const;

const options = z
  .strictObject({
    auth: z.enum(['secret', 'bearer', 'hmac']).default('secret'),
    header: z.string().min(1).optional(),
    timestamp_header: z.string().min(1).default('x-timestamp'),
    algorithm: z.enum(['sha256', 'sha512']).default('sha256'),
  })
  // Node gives a request's header names in lower case, and the route looks them up as named.
  .transform((o) => ({
    ...o,
    header: (o.header ?? DEFAULT_HEADER[o.auth]).toLowerCase(),
    timestamp_header: o.timestamp_header.toLowerCase(),
  }));

type Options = z.output<typeof options>;

const BEARER = /^bearer +(\S+) *$/i;

export const vapi = definePlatform<Options>({
  name: 'vapi',
  options: options as unknown as z.ZodType<Options>,
  bodyLimitBytes: 10 * 1024 * 1024,
  verify({ header, body }, secret, { auth, header: name, timestamp_header, algorithm }, now) {
    if (auth === 'bearer') {
      const token = BEARER.exec(header(name) ?? '')?.[1];
      if (token === undefined) return `no bearer token in ${name}`;
      return sameText(token, secret) ? undefined : 'a wrong bearer token';
    }
    if (auth === 'secret') {
      const given = header(name);
      if (given === undefined) return `no ${name} header`;
      return sameText(given, secret) ? undefined : `a wrong ${name}`;
    }
    const signature = header(name);
    const timestamp = header(timestamp_header);
    if (signature === undefined || timestamp === undefined) return `no ${name} or ${timestamp_header} header`;
    const sent = epochMs(timestamp);
    if (sent !== undefined && Math.abs(now - sent) > FIVE_MINUTES)
      return `${timestamp_header} more than 5 minutes away`;
    const expected = createHmac(algorithm, secret).update(`${timestamp}.`).update(body).digest('hex');
    return sameText(signature.trim().toLowerCase(), expected) ? undefined : `a wrong ${name}`;
  },
  read(payload, { timezone }) {
    const message = objectAt(payload, 'message');
    if (message.type !== 'end-of-call-report') return { kind: 'ignored', event: String(message.type ?? 'unknown') };
    const callId = at(message, 'call', 'id');
    if (typeof callId !== 'string' || callId === '')
      return { kind: 'ignored', event: 'end-of-call-report without call.id' };
    const analysis = objectAt(message, 'analysis');
    const started = Date.parse(String(message.startedAt ?? at(message, 'call', 'startedAt') ?? ''));
    const ended = Date.parse(String(message.endedAt ?? at(message, 'call', 'endedAt') ?? ''));
    const { structuredData: _, ...analysisRest } = analysis;
    const { analysis: __, ...rest } = message;
    return {
      kind: 'call',
      callId,
      fields: present({
        ...objectAt(analysis, 'structuredData'),
        call_id: callId,
        phone_number: at(message, 'customer', 'number') ?? at(message, 'call', 'customer', 'number'),
        call_date: dayIn(started, timezone),
        call_duration:
          Number.isFinite(started) && Number.isFinite(ended) ? Math.round((ended - started) / 1000) : undefined,
        call_summary: analysis.summary,
        recording_url: at(message, 'artifact', 'recordingUrl') ?? message.recordingUrl,
      }),
      rest: { ...rest, ...(Object.keys(analysisRest).length > 0 ? { analysis: analysisRest } : {}) },
    };
  },
  sign(body, secret, { auth, header, timestamp_header, algorithm }, now) {
    if (auth === 'bearer') return { [header]: `Bearer ${secret}` };
    if (auth === 'secret') return { [header]: secret };
    const timestamp = String(now);
    return {
      [header]: createHmac(algorithm, secret).update(`${timestamp}.${body}`).digest('hex'),
      [timestamp_header]: timestamp,
    };
  },
  // Vapi waits 20 s for a server URL's answer by default and does not retry an end-of-call report
  // (https://docs.vapi.ai/server-url/end-of-call-report).
  sender: { timeoutMs: 20_000, retries: 0 },
  sample(call) {
    // A status update as the call ends, then the report once its analysis is done
    // (https://docs.vapi.ai/server-url/events); Vapi has no sentiment of its own: the assistant's structured data
    // schema asks for one.
    const startedAt = new Date(call.startedAt).toISOString();
    const endedAt = new Date(call.endedAt).toISOString();
    const customer = call.phoneNumber === undefined ? {} : { number: call.phoneNumber };
    const inbound = call.direction === 'inbound';
    const about = {
      id: call.callId,
      orgId: 'org-simulated',
      type: inbound ? 'inboundPhoneCall' : 'outboundPhoneCall',
      status: 'ended',
      startedAt,
      endedAt,
      customer,
    };
    const phoneNumber = { number: call.agentNumber };
    const endedReason = inbound ? 'customer-ended-call' : 'assistant-ended-call';
    const transcript = call.transcript.map((t) => `${t.role === 'agent' ? 'AI' : 'User'}: ${t.text}`).join('\n');
    return [
      { message: { type: 'status-update', status: 'ended', endedReason, timestamp: call.endedAt, call: about } },
      {
        message: {
          type: 'end-of-call-report',
          timestamp: call.endedAt + 2_000,
          endedReason,
          startedAt,
          endedAt,
          durationSeconds: (call.endedAt - call.startedAt) / 1000,
          cost: 0.11,
          customer,
          phoneNumber,
          call: about,
          analysis: {
            summary: call.summary,
            structuredData: {
              ...call.data,
              ...(call.sentiment !== undefined && { sentiment_analysis: call.sentiment }),
            },
            successEvaluation: 'true',
          },
          artifact: {
            recordingUrl: call.recordingUrl,
            transcript,
            messages: call.transcript.map((t) => ({
              role: t.role === 'agent' ? 'bot' : 'user',
              message: t.text,
              secondsFromStart: t.secondsFromStart,
            })),
          },
        },
      },
    ];
  },
});
