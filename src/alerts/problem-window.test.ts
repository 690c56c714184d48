import { describe, expect, it } from 'vitest';
import { countCall, emptySlices, overRatio, recentCalls } from './problem-window.js';

const MINUTE = 60_000;

describe('problem_rate window', () => {
  it('counts the calls and the calls with problems within the window', () => {
    const s = emptySlices();
    countCall(s, MINUTE, 0, true);
    countCall(s, MINUTE, 500, false);
    countCall(s, MINUTE, 30_000, true);
    expect(recentCalls(s, MINUTE, 30_000)).toEqual({ calls: 3, withProblems: 2 });
    expect(recentCalls(emptySlices(), MINUTE, 30_000)).toEqual({ calls: 0, withProblems: 0 });
  });

  it('lets a call go with its whole slice as the window moves on', () => {
    const s = emptySlices();
    countCall(s, MINUTE, 0, true);
    countCall(s, MINUTE, 1_000, false);
    expect(recentCalls(s, MINUTE, MINUTE - 1)).toEqual({ calls: 2, withProblems: 1 });
    expect(recentCalls(s, MINUTE, MINUTE)).toEqual({ calls: 1, withProblems: 0 });
    expect(recentCalls(s, MINUTE, MINUTE + 1_000)).toEqual({ calls: 0, withProblems: 0 });
  });

  it('empties a slot before it counts a later slice in it', () => {
    const s = emptySlices();
    countCall(s, MINUTE, 0, true);
    // 61 slots of a second: the slice of 61 s takes the slot of the slice of 0 s.
    countCall(s, MINUTE, 61_000, false);
    expect(recentCalls(s, MINUTE, 61_000)).toEqual({ calls: 1, withProblems: 0 });
  });

  it('cuts a short window in slices of a second, not in sixtieths', () => {
    const s = emptySlices();
    countCall(s, 10_000, 900, true);
    expect(recentCalls(s, 10_000, 9_999)).toEqual({ calls: 1, withProblems: 1 });
    // 9.6 s old, but its slice began 10.5 s ago (in sixtieths of 10 s, its slice would still be in).
    expect(recentCalls(s, 10_000, 10_500)).toEqual({ calls: 0, withProblems: 0 });
  });

  it('is over the ratio with at least min_calls calls and strictly more than ratio of them with problems', () => {
    const rule = { window: MINUTE, min_calls: 20, ratio: 0.5 };
    expect(overRatio(rule, 19, 19)).toBe(false);
    expect(overRatio(rule, 20, 10)).toBe(false);
    expect(overRatio(rule, 20, 11)).toBe(true);
  });
});
