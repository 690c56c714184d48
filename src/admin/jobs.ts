import { randomUUID } from 'node:crypto';

/**
 * Work an admin request starts and leaves running (docs/reference.md#a-period-to-one-sink), answered at
 * once with the job's id, which `GET /admin/jobs/<id>` reads as it goes. Kept in the memory of the serve that runs
 * it, and nowhere else: a restart loses a running job's rest, and another replica does not know it. What a job has
 * done is in the store (the deliveries it made), so running it again does the rest; the job is only its progress.
 */

/** `stopped`: serve shut down while it ran; `failed`: it gave up, its errors say why. */
export type JobState = 'running' | 'done' | 'failed' | 'stopped';

/** What every job says of itself; each kind adds its own figures. Times are ISO 8601. */
export interface JobView {
  id: string;
  kind: string;
  state: JobState;
  started_at: string;
  finished_at: string | null;
  /** Each failure met on the way, retried or not, in the order met. */
  errors: string[];
}

/** A job's own fields, as the one who starts it gives them. */
export type JobFields<J extends JobView> = Omit<J, keyof Omit<JobView, 'kind'>>;

export interface Jobs {
  /**
   * Starts `work` on a job made of `fields`, and returns the job as it is at its start. `work` keeps its figures up to
   * date on the job it is handed, and stops soon after `signal` aborts (serve shutting down). What it throws fails
   * the job, with its message among the errors.
   */
  start<J extends JobView>(fields: JobFields<J>, work: (job: J, signal: AbortSignal) => Promise<void>): J;
  /** The job as it is now; undefined when there is none of that id (never started here, or forgotten). */
  get(id: string): JobView | undefined;
  /** Stops every running job and waits for each to end (serve's shutdown, before the store closes). */
  stop(): Promise<void>;
}

export interface JobsOptions {
  /** How many finished jobs are kept for reading, the newest; running ones are always kept. */
  keep?: number;
  now?: () => Date;
  /** Told when a job ends, for the log. */
  onEnd?: (job: JobView) => void;
}

export function createJobs({ keep = 100, now = () => new Date(), onEnd }: JobsOptions = {}): Jobs {
  const jobs = new Map<string, { job: JobView; abort: AbortController; ended: Promise<void> }>();
  const snapshot = <J extends JobView>(job: J): J => structuredClone(job);

  function forgetOld(): void {
    const finished = [...jobs.values()].filter((kept) => kept.job.state !== 'running');
    for (const kept of finished.slice(0, Math.max(0, finished.length - keep))) jobs.delete(kept.job.id);
  }

  return {
    start<J extends JobView>(fields: JobFields<J>, work: (job: J, signal: AbortSignal) => Promise<void>): J {
      const job = {
        ...fields,
        id: randomUUID(),
        state: 'running',
        started_at: now().toISOString(),
        finished_at: null,
        errors: [],
      } as unknown as J;
      const abort = new AbortController();
      // A turn later, so the job is answered as it starts before any of its work runs.
      const ended = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => work(job, abort.signal))
        .then(
          () => void (job.state = abort.signal.aborted ? 'stopped' : 'done'),
          (err: unknown) => {
            job.state = abort.signal.aborted ? 'stopped' : 'failed';
            job.errors.push(err instanceof Error ? err.message : String(err));
          },
        )
        .finally(() => {
          job.finished_at = now().toISOString();
          forgetOld();
          onEnd?.(snapshot(job));
        });
      jobs.set(job.id, { job, abort, ended });
      return snapshot(job);
    },
    get: (id) => {
      const kept = jobs.get(id);
      return kept && snapshot(kept.job);
    },
    async stop() {
      const running = [...jobs.values()].filter((kept) => kept.job.state === 'running');
      for (const kept of running) kept.abort.abort();
      await Promise.all(running.map((kept) => kept.ended));
    },
  };
}
