import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { healthRoutes } from './health.js';

/** What a PostgreSQL client says when its server refuses: the host, its address and the database user. */
const REFUSED = 'connect ECONNREFUSED 10.20.30.40:5432 (db-primary.internal.example, user callhook_prod)';
const SECRET_PARTS = ['10.20.30.40', 'db-primary.internal.example', 'callhook_prod', 'ECONNREFUSED'];

function routes(ping: () => Promise<void>, { workerRunning = true, storeDeadlineMs = 1000 } = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const app = healthRoutes({
    store: { ping },
    log,
    workerRunning: () => workerRunning,
    accepting: () => true,
    storeDeadlineMs,
  });
  return { app, lines };
}

describe('/readyz', () => {
  it('answers ready with every check ok', async () => {
    const { app, lines } = routes(async () => undefined);
    const res = await app.request('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { store: 'ok', delivery: 'ok', intake: 'ok' } });
    expect(lines).toEqual([]);
  });

  it("names the failing check and leaves the store's error to the log, where the operator reads it (docs/reference.md#operating)", async () => {
    const { app, lines } = routes(async () => {
      throw new Error(REFUSED);
    });
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      error: 503,
      message: 'not ready: store failing',
      checks: { store: 'failing', delivery: 'ok', intake: 'ok' },
    });
    for (const part of SECRET_PARTS) expect(text).not.toContain(part);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, check: 'store', err: { message: REFUSED } });
  });

  it('names each failing check, a store probe past its deadline as failing', async () => {
    const { app, lines } = routes(() => new Promise<void>(() => undefined), {
      workerRunning: false,
      storeDeadlineMs: 1,
    });
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      error: 503,
      message: 'not ready: store failing, delivery stopped',
      checks: { store: 'failing', delivery: 'stopped', intake: 'ok' },
    });
    expect(lines.map((l) => l.check)).toEqual(['store']);
  });

  it('gives the store probe the webhook deadline when shorter, and never more than 5 s (docs/reference.md#health)', async () => {
    vi.useFakeTimers();
    try {
      const answered = (storeDeadlineMs: number) => {
        const { app } = routes(() => new Promise<void>(() => undefined), { storeDeadlineMs });
        let status = 0;
        void Promise.resolve(app.request('/readyz')).then((res) => (status = res.status));
        return () => status;
      };
      const atDefault = answered(8_000);
      const atShort = answered(1_000);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(atShort()).toBe(503);
      await vi.advanceTimersByTimeAsync(3_999);
      expect(atDefault()).toBe(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(atDefault()).toBe(503);
    } finally {
      vi.useRealTimers();
    }
  });
});
