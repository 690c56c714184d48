import { readFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';

/** What the figures depend on, written next to them: they mean little on another machine. */

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  kernel: string;
  date: string;
}

export function describeMachine(): Machine {
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    ramGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    kernel: `Linux ${release()}`,
    date: new Date().toISOString(),
  };
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
