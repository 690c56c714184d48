import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { buildIntake } from './intake.js';
import type { WebhookRequest } from './parse/request-fields.js';
import { compileHooks } from './pipeline.js';
import type { RequestOutcome } from './request.js';

/** The intake serve builds once: where a request is ingested, and when the delivery worker is woken. */

let store: Store;
let woken = 0;
const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks: ['jsonl'] });
config.hooks.set('held', { ...config.hooks.get('end-of-call')!, name: 'held', on_problem: 'hold' });
const hooks = compileHooks(config);

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  woken = 0;
});
afterEach(() => store.close());

const request = (body: unknown, hook = 'end-of-call'): WebhookRequest => ({
  hook,
  method: 'POST',
  contentType: 'application/json',
  search: '',
  body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
  receivedAt: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
});

describe('buildIntake', () => {
  it('commits a request here when no thread takes it, and wakes the worker only for an accepted call', async () => {
    const intake = buildIntake({ store, hooks, onThread: () => undefined, onCommitted: () => woken++ });
    const first = await intake.ingestRequest(request({ call_id: 'c-1', phone_number: '09812345678' }));
    expect(first).toMatchObject({ reply: { status: 'accepted' } });
    expect(woken).toBe(1);
    // A duplicate, a held call and a refused request make no delivery due.
    expect(await intake.ingestRequest(request({ call_id: 'c-1', phone_number: '09812345678' }))).toMatchObject({
      reply: { status: 'duplicate' },
    });
    expect(await intake.ingestRequest(request({ call_id: 'c-2', call_date: 'soon' }, 'held'))).toMatchObject({
      reply: { status: 'held' },
    });
    expect(await intake.ingestRequest(request('{"call_id": '))).toMatchObject({ refused: { code: 'BAD_BODY' } });
    expect(woken).toBe(1);
    const { id } = (first as { reply: { id: string } }).reply;
    expect((await store.getCall(id))?.record).toMatchObject({ hook: 'end-of-call', source: 'webhook' });
  });

  it('hands a request to the thread when it takes it, and wakes the worker for what it accepted', async () => {
    const taken: WebhookRequest[] = [];
    const onThread = (r: WebhookRequest): Promise<RequestOutcome> => {
      taken.push(r);
      return Promise.resolve({ reply: { status: 'accepted', id: 'on-thread', dedup_key: null, problems: [] } });
    };
    const intake = buildIntake({ store, hooks, onThread, onCommitted: () => woken++ });
    expect(await intake.ingestRequest(request({ call_id: 'c-3' }))).toMatchObject({ reply: { id: 'on-thread' } });
    expect(taken).toHaveLength(1);
    expect(woken).toBe(1);
    expect(await store.listCalls({ limit: 10 })).toEqual([]);
  });

  it('ingests fields already read with the same hooks, waking the worker as a request does', async () => {
    const intake = buildIntake({ store, hooks, onCommitted: () => woken++ });
    const reply = await intake.ingestFields({
      hook: intake.hooks.get('end-of-call')!,
      fields: { call_id: 'c-4' },
      raw: { method: 'POST', content_type: 'application/json', query: {}, body: '{}' },
      source: 'reconcile',
      receipt: {
        hook: 'end-of-call',
        receivedAt: new Date().toISOString(),
        method: 'POST',
        contentType: null,
        size: 2,
      },
    });
    expect(reply.status).toBe('accepted');
    expect(woken).toBe(1);
  });
});
