import type { WorkerSink } from '../../src/delivery/worker.js';
import type { CallRecord } from '../../src/record.js';
import { DEFAULT_POLICY, type DeliveryPolicy } from '../../src/sinks/policy.js';
import type { Sink } from '../../src/sinks/sink.js';
import type { Store } from '../../src/store/store.js';

/** What the delivery worker's tests commit and deliver to: a call with nothing in it, and sinks with a policy. */

const record = (id: string): CallRecord => ({
  id,
  hook: 'end-of-call',
  dedup_key: `call_id:${id}`,
  received_at: new Date().toISOString(),
  source: 'webhook',
  revision: 1,
  data: {},
  extra: {},
  problems: [],
});

/** Commits the call `id` with a delivery to each of `sinks`. */
export const commit = (store: Store, id: string, sinks: string[]) =>
  store.commitCall({
    record: record(id),
    contentHash: id,
    onConflict: 'keep',
    status: 'accepted',
    raw: { method: 'POST', content_type: null, query: {}, body: '{}' },
    sinks,
    receipt: {
      hook: 'end-of-call',
      receivedAt: new Date().toISOString(),
      method: 'POST',
      contentType: 'application/json',
      size: 2,
    },
  });

/** The worker's sinks by name, each with the default policy and `policy` over it. */
export const sinksOf = (entries: [string, Sink][], policy: Partial<DeliveryPolicy> = {}) =>
  new Map<string, WorkerSink>(
    entries.map(([name, sink]) => [name, { sink, policy: { ...DEFAULT_POLICY, ...policy } }]),
  );
