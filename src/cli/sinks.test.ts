import { describe, expect, it } from 'vitest';
import type { SinkView } from '../admin/sinks.js';
import { sinkLine } from './sinks.js';

const SINK: SinkView = {
  name: 'crm',
  type: 'http',
  state: 'running',
  paused: false,
  paused_by: 'config',
  paused_changed_at: null,
  rate_limited_until: null,
  deliveries: { pending: 0, in_flight: 0, done: 2, dead: 0 },
  oldest_pending_age_seconds: 0,
  last_success_at: '2026-11-27T08:00:00.000Z',
  last_error: 'HTTP 500:\ncrm is down',
  last_error_at: '2026-11-27T07:00:00.000Z',
  failing: false,
};

describe('sinkLine', () => {
  it('says failing only while the last error is newer than the last success, and names an older one as before it', () => {
    expect(sinkLine(SINK)).toBe(
      'crm\thttp\trunning\tpending=0 in_flight=0 done=2 dead=0\toldest_pending=0s\tlast_success=2026-11-27T08:00:00.000Z\tlast_error_before_success=HTTP 500: crm is down',
    );
    const failing = { ...SINK, state: 'failing', failing: true, last_error_at: '2026-11-27T09:00:00.000Z' } as const;
    expect(sinkLine(failing).split('\t').slice(2)).toEqual([
      'failing',
      'pending=0 in_flight=0 done=2 dead=0',
      'oldest_pending=0s',
      'last_success=2026-11-27T08:00:00.000Z',
      'last_error=HTTP 500: crm is down',
    ]);
  });
});
