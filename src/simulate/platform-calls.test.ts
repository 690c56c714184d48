import { describe, expect, it } from 'vitest';
import { PLATFORMS } from '../platforms/index.js';
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

// Every platform that can be simulated reads its own sample back as one call, with the values it was made from.
describe.each(Object.values(PLATFORMS).filter((p) => p.sample))('$name sample', (platform) => {
  it('is read back as exactly one call, the others ignored', () => {
    const call = sampleCall(fields({ phone_number: '+919812345678', call_duration: 184 }), seeded(2), TODAY);
    const events = platform.sample!(call).map((e) => platform.read(JSON.parse(JSON.stringify(e)), { timezone: 'UTC' }));
    const calls = events.filter((e) => e.kind === 'call');
    expect(calls).toHaveLength(1);
    const [read] = calls;
    expect(read).toMatchObject({
      callId: call.callId,
      fields: {
        phone_number: '+919812345678',
        call_duration: 184,
        call_summary: call.summary,
        recording_url: call.recordingUrl,
        first_name: call.data.first_name,
        call_outcome: call.data.call_outcome,
      },
    });
  });
});
