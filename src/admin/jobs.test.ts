import { describe, expect, it } from 'vitest';
import { createJobs, type JobView } from './jobs.js';

/** The registry of background jobs (docs/reference.md#a-period-to-one-sink): answered at once, read as they go, kept in memory. */

interface Counting extends JobView {
  kind: 'count';
  count: number;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('createJobs', () => {
  it('answers with the job as it starts, before any of its work runs, and shows its figures as they go', async () => {
    const jobs = createJobs();
    let step = () => {};
    const job = jobs.start<Counting>({ kind: 'count', count: 0 }, async (j) => {
      j.count++;
      await new Promise<void>((resolve) => (step = resolve));
      j.count++;
    });
    expect(job).toMatchObject({ kind: 'count', state: 'running', count: 0, finished_at: null, errors: [] });
    expect(job.id).toMatch(/^[0-9a-f-]{36}$/);
    await settle();
    expect(jobs.get(job.id)).toMatchObject({ state: 'running', count: 1 });
    step();
    await settle();
    expect(jobs.get(job.id)).toMatchObject({ state: 'done', count: 2, finished_at: expect.any(String) });
    // A copy: what the reader holds does not change under it.
    expect(job.count).toBe(0);
    expect(jobs.get('no-such-job')).toBeUndefined();
  });

  it('fails a job whose work throws, with its message, and tells the log of every end', async () => {
    const ended: JobView[] = [];
    const jobs = createJobs({ onEnd: (job) => ended.push(job) });
    const job = jobs.start<Counting>({ kind: 'count', count: 0 }, async () => {
      throw new Error('the store is gone');
    });
    await settle();
    expect(jobs.get(job.id)).toMatchObject({ state: 'failed', errors: ['the store is gone'] });
    expect(ended.map((j) => [j.id, j.state])).toEqual([[job.id, 'failed']]);
  });

  it('stops the running jobs and waits for them; keeps the newest finished ones only', async () => {
    const jobs = createJobs({ keep: 2 });
    const finished = [0, 1, 2].map(() => jobs.start<Counting>({ kind: 'count', count: 0 }, async () => {}));
    const running = jobs.start<Counting>({ kind: 'count', count: 0 }, async (j, signal) => {
      while (!signal.aborted) await settle();
      j.count = 7;
    });
    await settle();
    expect(finished.map((j) => jobs.get(j.id)?.state)).toEqual([undefined, 'done', 'done']);
    expect(jobs.get(running.id)?.state).toBe('running');
    await jobs.stop();
    expect(jobs.get(running.id)).toMatchObject({ state: 'stopped', count: 7 });
  });
});
