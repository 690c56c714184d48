import { readFileSync } from 'node:fs';

/** Resident memory of another process, from /proc (Linux only, as the bench's machines are). */

/** Bytes, or undefined once the process is gone. */
export function readRss(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface RssSampler {
  /** The highest RSS seen so far, including a reading taken now. */
  peak(): number;
  stop(): number;
}

/** Polls every `everyMs`: a short spike between two readings can be missed, which is why the interval is small. */
export function sampleRss(pid: number, everyMs = 250): RssSampler {
  let peak = 0;
  const read = () => {
    const rss = readRss(pid);
    if (rss !== undefined && rss > peak) peak = rss;
    return peak;
  };
  const timer = setInterval(read, everyMs);
  return {
    peak: read,
    stop: () => (clearInterval(timer), read()),
  };
}
