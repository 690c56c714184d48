import { describe, expect, it } from 'vitest';
import { parseSince } from '../cli/reconcile.js';
import { audienceFields, campaignDate, isPlacedCall } from './audience.js';

describe('isPlacedCall', () => {
  it('takes a recording, a transcript or a duration as evidence of a call', () => {
    expect(isPlacedCall({ recording_url: 'https://rec.example/1.mp3' })).toBe(true);
    expect(isPlacedCall({ calltranscribe: 'AI: Hello' })).toBe(true);
    expect(isPlacedCall({ call_duration_in_sec: '12' })).toBe(true);
  });

  it('does not count a contact that was never reached', () => {
    expect(isPlacedCall({})).toBe(false);
    expect(
      isPlacedCall({ status: 'completed', call_duration_in_sec: '0', recording_url: ' ', calltranscribe: '' }),
    ).toBe(false);
    expect(isPlacedCall({ call_duration_in_sec: 'n/a' })).toBe(false);
  });
});

describe('campaignDate', () => {
  it('reads the date the campaign started, as written', () => {
    expect(campaignDate({ started_at: '2026-11-20T23:30:00-05:00' })).toBe('2026-11-20');
    expect(campaignDate({ started_at: '2026-11-20 09:00' })).toBe('2026-11-20');
    expect(campaignDate({ started_at: 'Fri, 20 Nov 2026 09:00:00 GMT' })).toBe('2026-11-20');
  });

  it('gives nothing for a start it cannot read', () => {
    expect(campaignDate({})).toBeUndefined();
    expect(campaignDate({ started_at: '' })).toBeUndefined();
    expect(campaignDate({ started_at: 'soon' })).toBeUndefined();
  });
});

describe('audienceFields', () => {
  it('names the fields as the webhook would, and keeps the rest for extra', () => {
    const fields = audienceFields(
      {
        first_name: 'Meera',
        last_name: 'Iyer',
        phone: '09811122233',
        call_duration_in_sec: '95',
        call_sentiment: 'negative',
        recording_url: 'https://rec.example/r3.mp3',
        status: 'completed',
        description: '',
        is_call_transferred: false,
      },
      { id: 'c1', name: 'Diwali offers', date: '2026-11-20' },
    );
    expect(fields).toEqual({
      call_id: 'reconcile:c1:https://rec.example/r3.mp3',
      first_name: 'Meera',
      last_name: 'Iyer',
      phone_number: '09811122233',
      call_date: '2026-11-20',
      call_duration: '95',
      sentiment_analysis: 'negative',
      recording_url: 'https://rec.example/r3.mp3',
      campaign_id: 'c1',
      campaign_name: 'Diwali offers',
      audience_status: 'completed',
      is_call_transferred: false,
    });
  });

  it('gives the same call_id on every run: by recording, else by phone, else by name', () => {
    expect(audienceFields({ phone: '9812345678' }, { id: 'c2' }).call_id).toBe('reconcile:c2:9812345678');
    expect(audienceFields({ first_name: 'Kiran', last_name: 'Rao' }, { id: 'c2' }).call_id).toBe(
      'reconcile:c2:Kiran Rao',
    );
  });
});

describe('parseSince', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  it('takes a date or an age', () => {
    expect(parseSince('2026-11-01', now)).toBe('2026-11-01');
    expect(parseSince('7d', now)).toBe('2026-11-15');
    expect(parseSince('2w', now)).toBe('2026-11-08');
    expect(parseSince('36h', now)).toBe('2026-11-21');
    expect(parseSince('90m', now)).toBe('2026-11-22');
  });

  it('refuses anything else, naming the option', () => {
    expect(() => parseSince('2026-02-30', now)).toThrow('--since takes a date');
    expect(() => parseSince('yesterday', now)).toThrow('--since takes a date');
    expect(() => parseSince('7 days', now)).toThrow('--since takes a date');
  });
});
