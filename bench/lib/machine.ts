import { closeSync, fdatasyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';

/** What the figures depend on, written next to them: they mean little on another machine. */

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  kernel: string;
  date: string;
  /** Milliseconds one 4 KiB append and its fdatasync take where the data dirs are: what a durable commit waits for. */
  fsync: { p50: number; p99: number };
}

export function describeMachine(): Machine {
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    ramGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    kernel: `Linux ${release()}`,
    date: new Date().toISOString(),
    fsync: measureFsync(),
  };
}

/**
 * A disk that syncs in a tenth of a millisecond and one that takes ten make very different baselines: the Express
 * app pays one sync per request, callhook one per batch. Measured in the file system the bench's data dirs use.
 */
function measureFsync(times = 200): { p50: number; p99: number } {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-bench-fsync-'));
  try {
    const fd = openSync(join(dir, 'probe'), 'a');
    const page = Buffer.alloc(4096, 1);
    const took: number[] = [];
    try {
      for (let i = 0; i < times; i++) {
        const started = performance.now();
        writeSync(fd, page);
        fdatasyncSync(fd);
        took.push(performance.now() - started);
      }
    } finally {
      closeSync(fd);
    }
    took.sort((a, b) => a - b);
    return { p50: took[Math.floor(times / 2)]!, p99: took[Math.ceil(times * 0.99) - 1]! };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) return match[1]!.trim();
  } catch {
    // not Linux: os.cpus() still names it
  }
  return cpus()[0]?.model ?? 'unknown';
}
