import { describe, expect, it } from 'vitest';
import { durationSchema } from '../duration.js';
import { DEFAULT_SCHEDULE_MS, deliveryOptionsSchema, toPolicy } from './policy.js';

describe('delivery options', () => {
  it('default to 8 attempts on the declared schedule, a 30 s timeout and 8 at once', () => {
    expect(toPolicy(deliveryOptionsSchema.parse({}))).toEqual({
      retry: { schedule: DEFAULT_SCHEDULE_MS, jitter: 0.2 },
      timeoutMs: 30_000,
      concurrency: 8,
      paused: false,
    });
  });

  it('read `rate` as starts per window and `paused` as the state a sink starts in (docs/reference.md#what-every-sink-shares)', () => {
    expect(toPolicy(deliveryOptionsSchema.parse({ rate: { max: 3, per: '1s' }, paused: true }))).toMatchObject({
      rate: { max: 3, perMs: 1000 },
      paused: true,
    });
    expect(toPolicy(deliveryOptionsSchema.parse({})).rate).toBeUndefined();
    expect(deliveryOptionsSchema.safeParse({ rate: { max: 3, per: 0 } }).error?.issues[0]?.message).toBe(
      'per must be longer than 0',
    );
    expect(() => deliveryOptionsSchema.parse({ rate: { max: 0, per: '1s' } })).toThrow();
    expect(() => deliveryOptionsSchema.parse({ rate: { max: 3 } })).toThrow();
    expect(() => deliveryOptionsSchema.parse({ paused: 'yes' })).toThrow();
  });

  it('read durations as milliseconds or text', () => {
    expect(durationSchema.parse(1500)).toBe(1500);
    expect(['500ms', '30s', '2m', '1.5h', '1d'].map((d) => durationSchema.parse(d))).toEqual([
      500, 30_000, 120_000, 5_400_000, 86_400_000,
    ]);
    expect(durationSchema.safeParse('soon').error?.issues[0]?.message).toMatch(/^"soon" is not a duration: /);
  });

  it('fit the schedule to the attempts asked for', () => {
    expect(toPolicy(deliveryOptionsSchema.parse({ retry: { attempts: 3 } })).retry.schedule).toEqual(
      DEFAULT_SCHEDULE_MS.slice(0, 2),
    );
    expect(
      toPolicy(deliveryOptionsSchema.parse({ retry: { attempts: 4, schedule: ['1s', '5s'], jitter: 0 } })).retry,
    ).toEqual({ schedule: [1000, 5000, 5000], jitter: 0 });
    expect(toPolicy(deliveryOptionsSchema.parse({ retry: { attempts: 1 } })).retry.schedule).toEqual([]);
    expect(toPolicy(deliveryOptionsSchema.parse({ retry: { schedule: ['10s'] } })).retry.schedule).toEqual([10_000]);
  });

  it('refuse what they do not know', () => {
    expect(() => deliveryOptionsSchema.parse({ retry: { tries: 3 } })).toThrow();
    expect(() => deliveryOptionsSchema.parse({ concurrency: 0 })).toThrow();
  });
});
