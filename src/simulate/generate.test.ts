import { describe, expect, it } from 'vitest';
import { isEmail, isHttpUrl, toCalendarDate, toE164 } from '../normalize/formats.js';
import { RECOMMENDED_PARAMETERS } from '../normalize/parameters.js';
import { seeded, syntheticCall } from './generate.js';

const calls = (n: number, empty = 0, seed = 5) => {
  const random = seeded(seed);
  return Array.from({ length: n }, (_, i) => syntheticCall(random, i, { empty, run: 'x', today: '2026-11-22' }));
};

describe('syntheticCall', () => {
  const many = calls(3000);

  it('fills every parameter of spec 6.4, and the call id of the sender', () => {
    const identifiers = ['call_id', ...RECOMMENDED_PARAMETERS.map((p) => p.identifier)].sort();
    for (const call of many) expect(Object.keys(call).sort()).toEqual(identifiers);
    expect(new Set(many.map((c) => c.call_id)).size).toBe(many.length);
  });

  it('writes names in several scripts', () => {
    const names = many.map((c) => `${c.first_name} ${c.last_name}`).join(' ');
    for (const script of [
      /\p{Script=Devanagari}/u,
      /\p{Script=Tamil}/u,
      /\p{Script=Arabic}/u,
      /\p{Script=Han}/u,
      /[áéíóúñü]/u,
      /^[A-Za-z' ]+$/,
    ]) {
      expect(
        many.some((c) => script.test(`${c.first_name} ${c.last_name}`)),
        String(script),
      ).toBe(true);
    }
    expect(names).toContain('García');
  });

  it('gives phone numbers as callers say them, every one a real E.164 number once normalised', () => {
    const phones = many.map((c) => String(c.phone_number));
    for (const shape of [
      /^\+91 \d{5} \d{5}$/,
      /^0\d{10}$/,
      /^\d{10}$/,
      /^0091-\d{5}-\d{5}$/,
      /^\+44\d{10}$/,
      /^\+1\d{10}$/,
      /^\+971\d{9}$/,
    ]) {
      expect(
        phones.some((p) => shape.test(p)),
        String(shape),
      ).toBe(true);
    }
    const invalid = phones.filter((p) => toE164(p, 'IN') === undefined);
    expect(invalid).toEqual([]);
  });

  it('dates calls in the 30 days up to today, with valid e-mail and recording addresses', () => {
    for (const call of many) {
      const day = String(call.call_date);
      expect(toCalendarDate(day)).toBe(day);
      expect(day >= '2026-10-23' && day <= '2026-11-22').toBe(true);
      expect(isEmail(String(call.email_address))).toBe(true);
      expect(isHttpUrl(String(call.recording_url))).toBe(true);
    }
  });

  it('varies outcomes and the case of sentiments, and summarises from the outcome', () => {
    expect(new Set(many.map((c) => c.call_outcome)).size).toBeGreaterThanOrEqual(5);
    expect(new Set(many.map((c) => c.sentiment_analysis))).toContain('POSITIVE');
    const wrong = many.find((c) => c.call_outcome === 'wrong number')!;
    expect(wrong.call_summary).toMatch(/belongs to someone else/);
    const ordered = many.filter((c) => c.call_outcome === 'order placed');
    expect(new Set(ordered.map((c) => c.order_id)).size).toBe(ordered.length);
    expect(ordered.every((c) => typeof c.quantity === 'number' && typeof c.order_value === 'number')).toBe(true);
    expect(many.filter((c) => c.call_outcome !== 'order placed').every((c) => c.order_id === '')).toBe(true);
  });

  it('sends "" at the chosen rate, never for the call id', () => {
    const values = calls(2000, 0.3).flatMap((c) =>
      Object.entries(c).filter(([k]) => k !== 'call_id' && !['order_id', 'quantity', 'order_value'].includes(k)),
    );
    const share = values.filter(([, v]) => v === '').length / values.length;
    expect(share).toBeGreaterThan(0.27);
    expect(share).toBeLessThan(0.33);
    expect(
      calls(50, 1).every((c) => c.call_id !== '' && Object.entries(c).every(([k, v]) => k === 'call_id' || v === '')),
    ).toBe(true);
  });

  it('is the same for the same seed', () => {
    expect(calls(100, 0.2, 9)).toEqual(calls(100, 0.2, 9));
    expect(calls(100, 0.2, 10)).not.toEqual(calls(100, 0.2, 9));
  });
});
