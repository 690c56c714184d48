import { describe, expect, it } from 'vitest';
import { PLATFORMS } from '../platforms/index.js';
import type { PlatformName, SampleCall } from '../platforms/platform.js';
import { seeded, syntheticCall } from './generate.js';
import { sampleCall } from './platform-calls.js';

const TODAY = '2026-11-22';
const fields = (overrides: Record<string, string | number> = {}) => ({
  ...syntheticCall(seeded(4), 0, { empty: 0, run: 'r', today: TODAY }),
  ...overrides,
});

describe('sampleCall', () => {
  it("gives what a platform measures itself, and the analysis's values under their own names", () => {
    const call = sampleCall(
      fields({
        phone_number: '098123 45678',
        call_date: '2026-11-20',
        call_duration: 95,
        sentiment_analysis: ' NEGATIVE ',
      }),
      seeded(1),
      TODAY,
    );
    expect(call.phoneNumber).toBe('+919812345678');
    expect(new Date(call.startedAt).toISOString().slice(0, 10)).toBe('2026-11-20');
    expect(call.endedAt - call.startedAt).toBe(95_000);
    expect(call.sentiment).toBe('Negative');
    expect(call.callId).toBe('sim-r-0');
    expect(Object.keys(call.data)).not.toContain('phone_number');
    expect(Object.keys(call.data)).not.toContain('call_summary');
    expect(call.data.first_name).toEqual(expect.any(String));
    expect(call.transcript.length).toBeGreaterThan(1);
  });

  it('leaves out what the AI found nothing for, and a number that is none; the time and duration are always there', () => {
    const call = sampleCall(
      fields({ first_name: '', call_summary: ' ', phone_number: '12345', call_date: '', call_duration: '' }),
      seeded(1),
      TODAY,
    );
    expect(call.data).not.toHaveProperty('first_name');
    expect(call.summary).toBeUndefined();
    expect(call.phoneNumber).toBeUndefined();
    expect(new Date(call.startedAt).toISOString().slice(0, 10)).toBe(TODAY);
    expect(call.endedAt).toBeGreaterThan(call.startedAt);
  });
});

/**
 * What a platform's end-of-call event does not carry, whatever the call: ElevenLabs' post_call_transcription has no
 * recording URL (docs/platforms/elevenlabs.md#the-mapping; the audio is an event of its own).
 */
const NOT_SENT: Partial<Record<PlatformName, string[]>> = { elevenlabs: ['recording_url'] };

// Every platform can be simulated, and reads its own sample back as one call, with the values it was made from.
describe.each(Object.values(PLATFORMS))('$name sample', (platform) => {
  const notSent = NOT_SENT[platform.name as PlatformName] ?? [];
  const read = (call: SampleCall) => {
    expect(platform.sample, `${platform.name} has no sample`).toBeDefined();
    return platform.sample!(call).map((e) => platform.read(JSON.parse(JSON.stringify(e)), { timezone: 'UTC' }));
  };

  it('is read back as exactly one call, the others ignored', () => {
    const call = sampleCall(
      fields({ phone_number: '+919812345678', call_duration: 184, sentiment_analysis: 'negative' }),
      seeded(2),
      TODAY,
    );
    const events = read(call);
    const calls = events.filter((e) => e.kind === 'call');
    expect(calls).toHaveLength(1);
    // The end-of-call event comes last: a platform posts it once the call's analysis is done.
    expect(events.at(-1)!.kind).toBe('call');
    const [stored] = calls;
    const made: Record<string, unknown> = {
      call_id: call.callId,
      phone_number: '+919812345678',
      call_date: new Date(call.startedAt).toISOString().slice(0, 10),
      call_duration: 184,
      call_summary: call.summary,
      sentiment_analysis: 'Negative',
      recording_url: call.recordingUrl,
      first_name: call.data.first_name,
      call_outcome: call.data.call_outcome,
    };
    expect(Object.values(made).every((v) => v !== undefined && v !== '')).toBe(true);
    const { fields: got } = stored as { fields: Record<string, unknown> };
    for (const name of notSent) {
      delete made[name];
      expect(got, name).not.toHaveProperty(name);
    }
    expect(stored).toMatchObject({ callId: call.callId, fields: made });
  });

  it('leaves out, when read back, what the call has not: the number, the summary, the analysis', () => {
    const call = sampleCall(
      fields({ phone_number: '12345', call_summary: '', sentiment_analysis: '', first_name: '', call_outcome: '' }),
      seeded(3),
      TODAY,
    );
    const [stored] = read(call).filter((e) => e.kind === 'call');
    expect(stored).toMatchObject({ callId: call.callId, fields: { call_duration: expect.any(Number) } });
    const { fields: got } = stored as { fields: Record<string, unknown> };
    for (const name of ['phone_number', 'call_summary', 'sentiment_analysis', 'first_name', 'call_outcome'])
      expect(got, name).not.toHaveProperty(name);
  });
});
