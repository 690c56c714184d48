import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time spent per request, from /proc (Linux only, as the bench's machines are). Throughput on a small machine
 * is bounded by the CPU every party spends per request, the load generator's included: these figures say where a
 * ratio's gap goes, in the same run as the ratio.
 */

/** utime and stime are counted in clock ticks of USER_HZ, which Linux fixes at 100 for every user-space reader. */
const US_PER_TICK = 10_000;

interface ServerTimes {
  /** The thread whose id is the process id: the event loop. */
  loop: number;
  /** Every other thread: workers (callhook's SQLite writer), V8's GC helpers, libuv's pool. */
  threads: number;
}

/** CPU µs per 2xx reply over one measured window. */
export interface CpuPerRequest {
  loop: number;
  threads: number;
  /** This process, which runs autocannon and nothing else while a run is measured. */
  load: number;
  /** Cores kept busy on average by the server and the load generator together. */
  cores: number;
}

export interface CpuWindow {
  end(requests: number): CpuPerRequest | undefined;
}

/** Starts counting now; `end` is undefined when the server's threads could not be read (not Linux, or it died). */
export function cpuWindow(pid: number): CpuWindow {
  const server = serverTimes(pid);
  const load = process.cpuUsage();
  const started = performance.now();
  return {
    end(requests) {
      const after = serverTimes(pid);
      if (!server || !after || requests <= 0) return undefined;
      const used = process.cpuUsage(load);
      const loop = after.loop - server.loop;
      // A thread that ended during the window takes its time with it: the figure is a floor, never inflated.
      const threads = Math.max(0, after.threads - server.threads);
      const total = loop + threads + used.user + used.system;
      const cores = total / ((performance.now() - started) * 1000);
      return { loop: loop / requests, threads: threads / requests, load: (used.user + used.system) / requests, cores };
    },
  };
}

function serverTimes(pid: number): ServerTimes | undefined {
  try {
    const times: ServerTimes = { loop: 0, threads: 0 };
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const used = threadTime(pid, tid);
      if (tid === String(pid)) times.loop = used;
      else times.threads += used;
    }
    return times;
  } catch {
    return undefined;
  }
}

/** Fields 14 and 15 of stat(5); the name in field 2 may hold spaces and parentheses, so fields count from its end. */
function threadTime(pid: number, tid: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * US_PER_TICK;
  } catch {
    return 0; // the thread ended between the listing and the read
  }
}
