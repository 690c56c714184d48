import { verify as sdkVerify } from 'retell-sdk';
import { symmetric } from 'retell-sdk/lib/webhook_auth';
import { describe, expect, it } from 'vitest';
import { retell } from './retell.js';

/**
 * Retell's signature as retell-sdk checks it (src/lib/webhook_auth.ts of
 * https://github.com/RetellAI/retell-typescript-sdk), and its call_analyzed read into a call
 * (https://docs.retellai.com/features/webhook-overview).
 */

const KEY = 'key_3f9a1c27e5b84d06a2c1f0e9d8b7a654';
const NOW = Date.parse('2026-03-14T11:30:00Z');
const BODY = '{"event":"call_analyzed","call":{"call_id":"c1","transcript":"Namaste 🙏"}}';
const bytes = (text: string) => new TextEncoder().encode(text);

const check = (signature: string | undefined, body = BODY, now = NOW) =>
  retell.verify(
    { header: (name) => (name === 'x-retell-signature' ? signature : undefined), body: bytes(body) },
    KEY,
    {},
    now,
  );
/** What retell-sdk's own verify says of the same header, at the same time. */
const sdkSays = (signature: string, body = BODY, now = NOW) =>
  symmetric.verify(body, KEY, signature, { timestamp: now });

describe('retell.verify', () => {
  it('agrees with retell-sdk’s verify on every header, whatever it says', async () => {
    const at = async (t: number) => symmetric.sign(BODY, KEY, t);
    const good = await at(NOW);
    const digest = good.split(',d=')[1]!;
    const headers = [
      good,
      await at(NOW - 5 * 60_000), // exactly 5 minutes: still in
      await at(NOW + 5 * 60_000),
      await at(NOW - 5 * 60_000 - 1),
      await at(NOW + 5 * 60_000 + 1),
      good.toUpperCase(), // V=…,D=<HEX>: the SDK's pattern ignores case
      `v=0${NOW},d=${digest}`, // the timestamp is read as a number: 0 in front signs the same
      `v=${NOW},d=${digest}00`,
      `v=${NOW},d=${digest.slice(2)}`,
      `v=${NOW},d=${'g'.repeat(64)}`,
      `d=${digest},v=${NOW}`,
      ` ${good}`,
      `${good},x=1`,
      `v=${NOW}`,
      `v=99999999999999999999,d=${digest}`,
      `v=${NOW},d=${digest.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`,
      await symmetric.sign(BODY, 'key_other', NOW),
    ];
    for (const header of headers) {
      expect(check(header) === undefined, header).toBe(await sdkSays(header));
    }
    const tampered = BODY.replace('c1', 'c2');
    expect(check(good, tampered)).toBe('a wrong x-retell-signature');
    expect(await sdkSays(good, tampered)).toBe(false);
  });

  it('says why it refuses', async () => {
    const good = await symmetric.sign(BODY, KEY, NOW);
    expect(check(undefined)).toBe('no x-retell-signature header');
    expect(check(good.slice(0, -1))).toBe('an x-retell-signature that is not v=<unix ms>,d=<64 hex digits>');
    expect(check(good, BODY, NOW + 6 * 60_000)).toBe('an x-retell-signature signed more than 5 minutes away');
    expect(check(await symmetric.sign(BODY, 'key_other', NOW))).toBe('a wrong x-retell-signature');
  });

  it('signs what retell-sdk verifies (callhook replay and simulate)', async () => {
    const { 'x-retell-signature': signature } = retell.sign(BODY, KEY, {}, Date.now());
    expect(signature).toMatch(/^v=\d{13},d=[0-9a-f]{64}$/);
    expect(await sdkVerify(BODY, KEY, signature!)).toBe(true);
    expect(await sdkVerify(`${BODY} `, KEY, signature!)).toBe(false);
  });
});

describe('retell.read', () => {
  const read = (payload: unknown) => retell.read(payload, { timezone: 'Asia/Kolkata' });
  const call = (fields: Record<string, unknown> = {}) => ({
    event: 'call_analyzed',
    call: {
      call_id: 'c1',
      call_type: 'phone_call',
      from_number: '+919876543210',
      to_number: '+918041234567',
      ...fields,
    },
  });

  it('ignores every event but call_analyzed, and a call_analyzed without a call id', () => {
    expect(read({ event: 'call_started', call: { call_id: 'c1' } })).toEqual({
      kind: 'ignored',
      event: 'call_started',
    });
    expect(read({ event: 'call_ended', call: { call_id: 'c1' } })).toEqual({ kind: 'ignored', event: 'call_ended' });
    expect(read({ event_type: 'call_analyzed', call: { call_id: 'c1' } })).toMatchObject({ kind: 'ignored' });
    expect(read([1, 2])).toMatchObject({ kind: 'ignored' });
    expect(read({ event: 'call_analyzed', call: { call_id: '' } })).toMatchObject({ kind: 'ignored' });
  });

  it('takes the caller by direction, and no number without one', () => {
    const phone = (direction?: string) => {
      const event = read(call({ direction }));
      return event.kind === 'call' ? event.fields.phone_number : 'ignored';
    };
    expect(phone('inbound')).toBe('+919876543210');
    expect(phone('outbound')).toBe('+918041234567');
    expect(phone(undefined)).toBeUndefined();
  });

  it('leaves an "Unknown" sentiment missing but kept, and a custom analysis that is no object as it came', () => {
    const event = read(
      call({ call_analysis: { user_sentiment: 'Unknown', custom_analysis_data: 'n/a', call_successful: false } }),
    );
    expect(event.kind === 'call' && event.fields.sentiment_analysis).toBeUndefined();
    expect(event.kind === 'call' && event.rest.call_analysis).toEqual({
      user_sentiment: 'Unknown',
      custom_analysis_data: 'n/a',
      call_successful: false,
    });
  });

  it('lets the platform’s values win over a custom analysis field of the same name, and keeps the rest', () => {
    const event = read(
      call({
        direction: 'inbound',
        call_analysis: { custom_analysis_data: { phone_number: '+911111111111', call_date: 'today', party_size: 4 } },
      }),
    );
    expect(event).toEqual({
      kind: 'call',
      callId: 'c1',
      // No start_timestamp: the custom call_date stays, for normalising to judge.
      fields: { call_id: 'c1', phone_number: '+919876543210', call_date: 'today', party_size: 4 },
      rest: { call_type: 'phone_call', from_number: '+919876543210', to_number: '+918041234567', direction: 'inbound' },
    });
  });
});
