import { describe, expect, it } from 'vitest';
import type { ReconcileRun } from '../store/reconcile-run.js';
import { keptRun, maskedRunError } from './kept-run.js';
import { emptySummary } from './reconcile.js';

const times = () => {
  let t = Date.parse('2026-11-26T10:00:00.000Z');
  return () => new Date((t += 1500));
};

describe('the kept reconcile run', () => {
  it('keeps a finished run, a dry run marked as such, with what it found', async () => {
    const kept: ReconcileRun[] = [];
    const store = { recordReconcileRun: async (run: ReconcileRun) => void kept.push(run) };
    const summary = await keptRun(
      { store, trigger: 'cli', since: '2026-11-01', dryRun: true, secrets: [], onKeepError: () => {}, now: times() },
      async (into) => {
        Object.assign(into, { campaigns: 2, entries: 7, calls: 5, matched: 3, deferred: 0 });
        into.recovered.push(
          { campaign: 'c', name: 'n', phone: undefined, recordingUrl: undefined },
          { campaign: 'c', name: 'm', phone: undefined, recordingUrl: undefined },
        );
        return into;
      },
    );
    expect(summary.recovered).toHaveLength(2);
    expect(kept).toEqual([
      {
        startedAt: '2026-11-26T10:00:01.500Z',
        finishedAt: '2026-11-26T10:00:03.000Z',
        trigger: 'cli',
        since: '2026-11-01',
        dryRun: true,
        campaigns: 2,
        calls: 5,
        stored: 2,
        alreadyReceived: 3,
        deferred: 0,
        errors: 0,
        error: null,
      },
    ]);
  });

  it('keeps a failed run with what it had done and its error masked, and still fails', async () => {
    const kept: ReconcileRun[] = [];
    const store = { recordReconcileRun: async (run: ReconcileRun) => void kept.push(run) };
    const failing = keptRun(
      {
        store,
        trigger: 'serve',
        since: undefined,
        dryRun: false,
        secrets: ['svc-secret-key-42'],
        onKeepError: () => {},
      },
      async (into) => {
        into.campaigns = 1;
        into.calls = 3;
        into.matched = 1;
        throw new Error(
          'the calling service at https://svc-secret-key-42@calls.example answered 500 for +91 98123 45678',
        );
      },
    );
    await expect(failing).rejects.toThrow(/answered 500/);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({
      trigger: 'serve',
      since: null,
      dryRun: false,
      campaigns: 1,
      calls: 3,
      alreadyReceived: 1,
      stored: 0,
      errors: 1,
    });
    expect(kept[0]!.error).toBe('the calling service at https://***@calls.example answered 500 for ***');
  });

  it("leaves the run's own outcome to stand when it cannot be kept", async () => {
    const told: unknown[] = [];
    const store = { recordReconcileRun: async () => Promise.reject(new Error('disk full')) };
    const summary = await keptRun(
      { store, trigger: 'cli', since: undefined, dryRun: false, secrets: [], onKeepError: (err) => told.push(err) },
      async () => emptySummary(),
    );
    expect(summary.calls).toBe(0);
    expect(told.map((e) => (e as Error).message)).toEqual(['disk full']);
  });

  it('masks phone numbers written any way, leaves dates, ports and status codes, and cuts a long text to a line', () => {
    expect(maskedRunError('09811122233, 98450-12345 and (080) 2345 6789 failed', [])).toBe('***, *** and *** failed');
    expect(maskedRunError('started 2026-11-20 10:30:00 at 127.0.0.1:5432: HTTP 503', [])).toBe(
      'started 2026-11-20 10:30:00 at 127.0.0.1:5432: HTTP 503',
    );
    const long = maskedRunError(`answered 500: ${'x'.repeat(1000)}\n\tmore`, []);
    expect(long).toHaveLength(300);
    expect(long.endsWith('…')).toBe(true);
  });
});
