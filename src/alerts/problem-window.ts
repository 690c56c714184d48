import type { RulesConfig } from './config.js';

/**
 * `problem_rate`'s window (docs/reference.md#alerts): a hook's calls and its calls with problems, counted as they
 * arrive in slices of the window, so that a call costs an addition or two and the rule reads a sum of SLICES + 1
 * numbers. The window is read whole slices at a time: it may be up to one slice shorter than configured.
 */

/** A hook's recent calls are counted in this many slices of `problem_rate`'s window. */
export const SLICES = 60;

/** A hook's calls and calls with problems, in slices of time: a ring of SLICES + 1, each slot naming its slice. */
export interface Slices {
  index: number[];
  calls: number[];
  problems: number[];
}

export type ProblemRate = Exclude<RulesConfig['problem_rate'], false>;

export function emptySlices(): Slices {
  const none = () => new Array<number>(SLICES + 1).fill(0);
  return { index: new Array<number>(SLICES + 1).fill(-1), calls: none(), problems: none() };
}

/** A slice's width: a whole second at least. */
const sliceMs = (window: number) => Math.max(1000, Math.ceil(window / SLICES));

/** Counts one call at `at`, in the slot of its slice (emptied first when it held an older one). */
export function countCall(s: Slices, window: number, at: number, problems: boolean): void {
  const slice = Math.floor(at / sliceMs(window));
  const i = slice % (SLICES + 1);
  if (s.index[i] !== slice) {
    s.index[i] = slice;
    s.calls[i] = 0;
    s.problems[i] = 0;
  }
  s.calls[i]! += 1;
  if (problems) s.problems[i]! += 1;
}

/** The calls, and the calls with problems, of the slices within the window that ends at `at`. */
export function recentCalls(s: Slices, window: number, at: number): { calls: number; withProblems: number } {
  const width = sliceMs(window);
  const first = Math.floor((at - window) / width) + 1;
  let calls = 0;
  let withProblems = 0;
  for (let i = 0; i <= SLICES; i++) {
    if (s.index[i]! < first) continue;
    calls += s.calls[i]!;
    withProblems += s.problems[i]!;
  }
  return { calls, withProblems };
}

/** Whether enough calls were counted, and too many of them carry problems. */
export function overRatio(rule: ProblemRate, calls: number, withProblems: number): boolean {
  return calls >= rule.min_calls && withProblems / calls > rule.ratio;
}

export function problemRateSummary(hook: string, calls: number, withProblems: number): string {
  return `${withProblems} of the last ${calls} calls of hook "${hook}" carry problems: the AI's fields no longer match the hook's declared parameters (were the body parameters changed in the calling service?)`;
}
