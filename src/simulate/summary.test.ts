import { describe, expect, it } from 'vitest';
import { plan } from './plan.js';
import { percentile, tally } from './summary.js';

const requests = plan({
  count: 5,
  duplicates: 0,
  empty: 0,
  encodings: ['json'],
  methods: ['POST'],
  seed: 1,
  today: '2026-11-22',
});
const repeat = { ...requests[0]!, repeat: true };

describe('tally', () => {
  it('counts replies by status and by reply status, with accepted, duplicate and held always there', () => {
    const counted = tally();
    counted.add({ planned: requests[0]!, status: 200, body: '{"status":"accepted","id":"a"}', latencyMs: 3 });
    counted.add({ planned: requests[1]!, status: 201, body: 'ok', latencyMs: 5 });
    counted.add({ planned: repeat, status: 200, body: '{"status":"duplicate","id":"a"}', latencyMs: 4 });
    const summary = counted.summary(1000);
    expect(summary.by_status).toEqual({ 200: 2, 201: 1 });
    expect(summary.by_reply).toEqual({ accepted: 1, duplicate: 1, held: 0, 'not json': 1 });
    expect(summary).toMatchObject({ sent: 3, calls: 2, duplicates_sent: 1, failures: 0, elapsed_ms: 1000, rate: 3 });
  });

  it('records a failure as the sender would: status or timeout/network, and the first 200 characters', () => {
    const counted = tally();
    counted.add({ planned: requests[0]!, status: 503, body: 'x'.repeat(500), latencyMs: 1 });
    counted.add({ planned: requests[1]!, status: 'timeout', body: 'no reply within 10000 ms' });
    counted.add({ planned: requests[2]!, status: 'network', body: 'connect ECONNREFUSED' });
    const summary = counted.summary(10);
    expect(summary.failures).toBe(3);
    expect(summary.failed.map((f) => f.status)).toEqual([503, 'timeout', 'network']);
    expect(summary.failed[0]!.body).toHaveLength(200);
    expect(summary.by_status).toEqual({ 503: 1, timeout: 1, network: 1 });
    // Only replies have a latency.
    expect(summary.latency_ms.max).toBe(1);
  });
});

describe('tally of a retrying sender', () => {
  it('counts every attempt by status and latency, and only a last attempt that failed as lost, with its attempts', () => {
    const counted = tally();
    const timeout = { status: 'timeout' as const, body: 'no reply within 10000 ms' };
    counted.add({
      planned: requests[0]!,
      status: 200,
      body: '{"status":"accepted"}',
      latencyMs: 2,
      earlier: [timeout],
    });
    counted.add({
      planned: { ...requests[0]!, followUp: true },
      status: 200,
      body: '{"status":"ignored"}',
      latencyMs: 1,
    });
    counted.add({ planned: requests[1]!, status: 500, body: 'no', latencyMs: 9, earlier: [timeout, { ...timeout }] });
    const summary = counted.summary(100);
    expect(summary).toMatchObject({ sent: 3, calls: 2, duplicates_sent: 0, retries: 3, failures: 1 });
    expect(summary.by_status).toEqual({ timeout: 3, 200: 2, 500: 1 });
    expect(summary.by_reply).toEqual({ accepted: 1, duplicate: 0, held: 0, ignored: 1 });
    expect(summary.failed).toEqual([{ call_id: requests[1]!.callId, status: 500, body: 'no', attempts: 3 }]);
    expect(summary.latency_ms.max).toBe(9);
  });
});

describe('percentile', () => {
  it('is a value that was seen, by nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(sorted, 0.5), percentile(sorted, 0.9), percentile(sorted, 0.99)]).toEqual([50, 90, 99]);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBe(0);
  });
});
