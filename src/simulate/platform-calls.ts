import { DEFAULT_PHONE_REGION, toE164 } from '../normalize/formats.js';
import type { SampleCall } from '../platforms/platform.js';
import { pick, type Random } from './generate.js';

/**
 * The calls `callhook simulate --platform` makes up (docs/reference.md#other-voice-platforms), from the calling
 * service's synthetic ones (generate.ts): the same callers, outcomes and summaries, as a voice platform knows them. What
 * a platform measures itself (when the call started, how long it took, the caller's number in E.164) it always has;
 * what its analysis extracts is left out where the AI found nothing (a `""` of the service's), as a platform leaves a
 * field of its structured data out.
 */

/** The platform's own number, from North America's 555-01xx range kept for fiction: no real subscriber. */
const AGENT_NUMBER = '+14155550199';

/** What the platform knows itself, not the analysis: kept off `data`. */
const MEASURED = [
  'call_id',
  'phone_number',
  'call_date',
  'call_duration',
  'call_summary',
  'sentiment_analysis',
  'recording_url',
];

export function sampleCall(fields: Record<string, string | number>, random: Random, today: string): SampleCall {
  const text = (name: string) => {
    const value = fields[name];
    return value === undefined || String(value).trim() === '' ? undefined : String(value).trim();
  };
  const day = text('call_date') ?? today;
  // Between 09:30 and 21:30 in India, where the synthetic callers are: the call's day is the same there and in UTC.
  const startedAt = Date.parse(`${day}T04:00:00.000Z`) + Math.floor(random() * 12 * 3_600_000);
  const seconds = Number(text('call_duration') ?? 30 + Math.floor(random() * 300));
  const sentiment = text('sentiment_analysis')?.toLowerCase();
  const data = Object.fromEntries(
    Object.entries(fields).filter(([name, value]) => !MEASURED.includes(name) && String(value).trim() !== ''),
  );
  const phone = text('phone_number');
  return {
    callId: String(fields.call_id),
    direction: pick(random, ['inbound', 'outbound'] as const),
    // A platform has the caller's number from the network, in E.164; a number that is none is left out.
    phoneNumber: phone === undefined ? undefined : toE164(phone, DEFAULT_PHONE_REGION),
    agentNumber: AGENT_NUMBER,
    startedAt,
    endedAt: startedAt + seconds * 1000,
    summary: text('call_summary'),
    sentiment: sentiment && `${sentiment[0]!.toUpperCase()}${sentiment.slice(1)}`,
    recordingUrl: text('recording_url'),
    data,
    transcript: transcript(fields, seconds),
  };
}

/** A few turns of the conversation the summary tells of. */
function transcript(fields: Record<string, string | number>, seconds: number): SampleCall['transcript'] {
  const name = String(fields.first_name ?? '').trim();
  const product = String(fields.product_name ?? '').trim() || 'our offer';
  const outcome = String(fields.call_outcome ?? '').trim();
  return [
    { role: 'agent', text: `Hello${name && `, am I speaking with ${name}`}? I am calling about the ${product}.` },
    { role: 'user', text: name ? `Yes, this is ${name}.` : 'Yes?' },
    { role: 'agent', text: 'Would you like to go ahead?' },
    { role: 'user', text: outcome ? `${outcome[0]!.toUpperCase()}${outcome.slice(1)}, thank you.` : 'Thank you.' },
  ].map((turn, i, all) => ({
    ...(turn as { role: 'agent' | 'user'; text: string }),
    secondsFromStart: Math.round((seconds * i) / all.length),
  }));
}
