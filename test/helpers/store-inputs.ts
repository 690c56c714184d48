import { randomUUID } from 'node:crypto';
import { newId } from '../../src/ids.js';
import { contentHash } from '../../src/normalize/dedup-key.js';
import type { CallRecord, Scalar } from '../../src/record.js';
import type { CallStatus, CommitInput } from '../../src/store/calls.js';
import type { IncidentRecord, IncidentStore } from '../../src/store/incidents.js';
import type { Store } from '../../src/store/store.js';

/** What the store contract tests commit and report: calls, data and attempt results under unique names. */

// 60 random bits: with 32, a test that commits thousands of calls met two with one dedup key about once in 1,400 runs.
export const unique = (prefix: string) => `${prefix}-${randomUUID().replaceAll('-', '').slice(0, 16)}`;
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function commitInput(
  hook: string,
  dedupKey: string | null,
  sinks: readonly string[],
  at = Date.now(),
  data: Record<string, Scalar> = { first_name: 'Asha', call_duration: 184 },
): CommitInput {
  const record: CallRecord = {
    id: newId(at),
    hook,
    dedup_key: dedupKey,
    received_at: new Date(at).toISOString(),
    source: 'webhook',
    revision: 1,
    data,
    extra: {},
    problems: [],
  };
  return {
    record,
    contentHash: contentHash(record.data, record.extra),
    onConflict: 'keep',
    status: 'accepted',
    raw: { method: 'POST', content_type: 'application/json', query: {}, body: '{"first_name":"Asha"}' },
    sinks,
    receipt: { hook, receivedAt: record.received_at, method: 'POST', contentType: 'application/json', size: 21 },
  };
}

/** Commits a call whose record holds these data fields, received at `at`; returns its id. */
export async function commitData(
  store: Store,
  hook: string,
  data: Record<string, Scalar>,
  at: string,
  status: CallStatus = 'accepted',
  sinks: readonly string[] = [],
): Promise<string> {
  const input = { ...commitInput(hook, `call_id:${unique('c')}`, sinks, Date.parse(at), data), status };
  return (await store.commitCall(input)).id;
}

export const attemptOk = {
  startedAt: new Date().toISOString(),
  durationMs: 12.5,
  outcome: 'ok' as const,
  httpStatus: 200,
};

/** An open `dead_delivery` incident of the sink, told to no channel: what an operator acknowledges. */
export async function deadDeliveryIncident(
  store: Pick<IncidentStore, 'openIncident'>,
  sink: string,
): Promise<IncidentRecord> {
  const { incident } = await store.openIncident({
    id: newId(),
    rule: 'dead_delivery',
    key: sink,
    at: new Date().toISOString(),
    counts: { dead: 1 },
    summary: `dead_delivery ${sink}`,
    channels: [],
  });
  return incident;
}
