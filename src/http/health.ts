import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Maintenance } from '../store/maintenance.js';
import { STORE_DEADLINE_MS, STORE_PROBE_MS, withinDeadline } from './deadline.js';

export interface HealthDeps {
  store: Pick<Maintenance, 'ping'>;
  /** Where a failing check's own error goes: the reply never carries it. */
  log: Logger;
  /** Whether the delivery worker is running; readiness needs both intake and delivery. */
  workerRunning: () => boolean;
  /** False once shutdown began, so a load balancer stops sending new calls here. */
  accepting: () => boolean;
  /**
   * The config's `store_deadline`, what a webhook's commit gets (deadline.ts). The probe gets as long when shorter, as
   * a store that cannot write within it cannot take a call either; never more than STORE_PROBE_MS, which a load
   * balancer waits (docs/reference.md#health).
   */
  storeDeadlineMs?: number;
}

/** `/healthz` says the process runs; `/readyz` that a call sent now would be committed and delivered. */
export function healthRoutes({
  store,
  log,
  workerRunning,
  accepting,
  storeDeadlineMs = STORE_DEADLINE_MS,
}: HealthDeps): Hono {
  const probeMs = Math.min(storeDeadlineMs, STORE_PROBE_MS);
  return new Hono()
    .get('/healthz', (c) => c.json({ status: 'ok' }))
    .get('/readyz', async (c) => {
      const checks = {
        store: 'ok',
        delivery: workerRunning() ? 'ok' : 'stopped',
        intake: accepting() ? 'ok' : 'draining',
      };
      try {
        await withinDeadline(store.ping(), probeMs, 'the store probe');
      } catch (err) {
        // docs/reference.md#health: /readyz answers anyone, and a store's error names hosts, addresses and database
        // users. The reply says which check failed; what failed is the operator's to read, in the log.
        checks.store = 'failing';
        log.warn({ err, check: 'store' }, 'readiness: the store probe failed');
      }
      const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
      if (failing.length === 0) return c.json({ status: 'ready', checks });
      const message = `not ready: ${failing.map(([k, v]) => `${k} ${v}`).join(', ')}`;
      return c.json({ error: 503, message, checks }, 503);
    });
}
