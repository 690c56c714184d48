import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { CallhookError } from '../errors.js';
import { buildIntake } from '../intake/intake.js';
import { compileHooks } from '../intake/pipeline.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { type AdminOperations, adminOperations } from './operations.js';

/** The operations built once for the admin API and the dashboard: one store, one intake, one list of sinks. */

let store: Store;
let ops: AdminOperations;
let woken = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  woken = 0;
  const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
  config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks: ['crm'] });
  const notify = () => woken++;
  const intake = buildIntake({ store, hooks: compileHooks(config), onCommitted: notify });
  ops = adminOperations({
    store,
    intake,
    sinks: [
      { name: 'crm', type: 'webhook', pausedByDefault: false },
      { name: 'sheet', type: 'google-sheets', pausedByDefault: true },
    ],
    notify,
    bodyLimitBytes: 1024,
  });
});
afterEach(() => store.close());

const refusal = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (err: unknown) => (err instanceof CallhookError ? err.status : err),
  );

describe('adminOperations', () => {
  it('names the configured sinks to every operation that takes a sink', async () => {
    expect(ops.sinkNames).toEqual(['crm', 'sheet']);
    expect((await ops.sinks.listSinks()).map((s) => [s.name, s.paused])).toEqual([
      ['crm', false],
      ['sheet', true],
    ]);
    expect(await refusal(ops.deliveries.retryDeliveries({ sink: 'nowhere' }))).toBe(400);
    expect(await refusal(ops.sinks.pauseSink('nowhere', true))).toBe(404);
  });

  it('ingests a refused request through the intake it was given, which wakes the worker', async () => {
    const rawBody = new TextEncoder().encode('{"call_id": "lost-1", "first_name": "Asha"}');
    await store.recordRejection({
      hook: 'end-of-call',
      receivedAt: '2026-11-21T10:00:00.000Z',
      method: 'POST',
      contentType: 'text/plain',
      size: rawBody.byteLength,
      status: 415,
      outcome: 'rejected',
      error: 'unsupported content type',
      rawBody,
    });
    const { receipts } = await ops.receipts.listReceipts({ outcome: 'rejected', order: 'desc', limit: 1 });
    const { reply } = await ops.receipts.ingestReceipt(receipts[0]!.id, { contentType: 'application/json' });
    expect(reply).toMatchObject({ status: 'accepted' });
    expect(woken).toBe(1);
    const call = await ops.calls.showCall(reply.id);
    expect(call.record.source).toBe('recovered');
    expect(call.deliveries.map((d) => d.sink)).toEqual(['crm']);
    expect(await refusal(ops.calls.redeliverCall(reply.id, ['nowhere']))).toBe(400);
  });
});
