import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { WebhookRequest } from '../src/intake/parse/request-fields.js';
import { compileHooks } from '../src/intake/pipeline.js';
import { createRequestIntake, type RequestOutcome } from '../src/intake/request.js';
import { resolveSinks } from '../src/sinks/registry.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { unique } from './helpers/store-inputs.js';
import { catchWarnings } from './helpers/warnings.js';
import { openThreaded, type Threaded } from './helpers/writer-thread.js';

/**
 * serve hands each end-of-call request to SQLite's writer thread as bytes (src/intake/thread.ts): parsed,
 * normalised and committed there, in the group commit of its turn. What comes back must be what the event loop
 * would have answered, and the thread must really be the one answering.
 */

const dir = mkdtempSync(join(tmpdir(), 'callhook-thread-intake-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const configFile = join(dir, 'config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    sinks: [
      { name: 'all', type: 'jsonl', path: join(dir, 'all.jsonl') },
      {
        name: 'orders',
        type: 'jsonl',
        path: join(dir, 'orders.jsonl'),
        when: { field: 'call_outcome', eq: 'order placed' },
      },
    ],
  }),
);
const config = loadConfig({ CALLHOOK_API_KEYS: 'thread-intake-key-0123456789', CALLHOOK_CONFIG: configFile });
const specs = await resolveSinks(config.sinks);

function openWithThread(name: string): Threaded {
  return openThreaded(join(dir, `${name}.db`), config, specs);
}

const encoder = new TextEncoder();
const fields = (callId: string) => ({
  call_id: callId,
  first_name: 'Asha',
  last_name: 'Verma',
  phone_number: '098123 45678',
  call_date: '2026-11-21',
  call_duration: '184',
  call_outcome: 'Order placed ',
  call_summary: 'Ordered two kettles.',
  sentiment_analysis: 'positive',
});

function request(body: string, contentType: string | null, search = ''): WebhookRequest {
  return {
    hook: 'end-of-call',
    method: 'POST',
    contentType,
    search,
    body: encoder.encode(body),
    receivedAt: new Date().toISOString(),
    source: 'webhook',
  };
}

const json = (callId: string) => request(JSON.stringify(fields(callId)), 'application/json');
const form = (callId: string) =>
  request(new URLSearchParams(fields(callId)).toString(), 'application/x-www-form-urlencoded');
function multipart(callId: string): WebhookRequest {
  const boundary = 'thread-intake-boundary';
  const parts = Object.entries(fields(callId)).map(
    ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
  );
  return request(`${parts.join('')}--${boundary}--\r\n`, `multipart/form-data; boundary=${boundary}`);
}

/** Through the thread: undefined here would mean the event loop has to do it. */
function onThread({ thread }: Threaded, r: WebhookRequest): Promise<RequestOutcome> {
  const answer = thread.ingest(r);
  expect(answer, 'the writer thread took the request').toBeDefined();
  return answer as Promise<RequestOutcome>;
}

describe('webhook intake on the SQLite writer thread', () => {
  it('answers and stores every encoding as the event loop would', async () => {
    const threaded = openWithThread('same');
    const inPlace = openSqliteStore({ path: ':memory:' });
    const here = createRequestIntake({
      hooks: compileHooks(config, specs),
      commit: (input) => inPlace.commitCall(input),
    });
    try {
      for (const make of [json, form, multipart]) {
        const callId = unique('call');
        const there = await onThread(threaded, make(callId));
        const local = await here(make(callId));
        expect(there).toMatchObject({ reply: { status: 'accepted', dedup_key: `call_id:${callId}`, problems: [] } });
        expect({ ...there, reply: { ...(there as { reply: object }).reply, id: 'x' } }).toEqual({
          ...local,
          reply: { ...(local as { reply: object }).reply, id: 'x' },
        });

        const stored = (await threaded.store.getCall((there as { reply: { id: string } }).reply.id))!;
        const expected = (await inPlace.getCall((local as { reply: { id: string } }).reply.id))!;
        expect(stored.record.data).toEqual({ ...expected.record.data });
        expect(stored.record.data.phone_number).toBe('+919812345678');
        expect(stored.raw).toEqual(expected.raw);
      }
      // `when` filters are compiled on the thread too: both sinks want an order.
      expect((await threaded.store.countDeliveries()).pending).toBe(6);
    } finally {
      await threaded.close();
      await inPlace.close();
    }
  });

  it('keeps dedup exact for copies of one call committed in one batch', async () => {
    const store = openWithThread('copies');
    try {
      const callId = unique('call');
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => onThread(store, json(callId))));
      const statuses = outcomes.map((o) => ('reply' in o ? o.reply.status : 'refused'));
      expect(statuses.filter((s) => s === 'accepted')).toHaveLength(1);
      expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(9);
      const ids = new Set(outcomes.map((o) => ('reply' in o ? o.reply.id : '')));
      expect(ids.size).toBe(1);
      const stored = (await store.store.getCall([...ids][0]!))!;
      expect(stored.duplicates).toBe(9);
    } finally {
      await store.close();
    }
  });

  it('refuses a body it cannot read with the error of docs/reference.md#receiving, and stores nothing', async () => {
    const store = openWithThread('refused');
    try {
      expect(await onThread(store, request('{"call_id": "x",', 'application/json'))).toMatchObject({
        refused: { code: 'BAD_BODY' },
      });
      expect(await onThread(store, request('<xml/>', 'text/xml'))).toEqual({
        refused: { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'text/xml' },
      });
      expect(await store.store.listCalls({ limit: 10 })).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('fills fields from the query string where the body has none', async () => {
    const store = openWithThread('query');
    try {
      const callId = unique('call');
      const outcome = await onThread(
        store,
        request(JSON.stringify({ first_name: 'Asha' }), 'application/json', `?call_id=${callId}&first_name=Other`),
      );
      expect(outcome).toMatchObject({ reply: { status: 'accepted', dedup_key: `call_id:${callId}` } });
      const stored = (await store.store.getCall((outcome as { reply: { id: string } }).reply.id))!;
      expect(stored.record.data.first_name).toBe('Asha');
      expect(stored.raw.query).toEqual({ call_id: callId, first_name: 'Other' });
    } finally {
      await store.close();
    }
  });

  it('hands nothing more to a thread that failed, so the event loop ingests instead', async () => {
    const path = join(dir, 'failed.db');
    const moved = join(dir, 'failed-away.db');
    const store = openThreaded(path, config, specs);
    try {
      renameSync(path, moved);
      const warnings = catchWarnings('CALLHOOK_THREAD_FAILED');
      await expect(onThread(store, json(unique('call')))).rejects.toThrow('the SQLite writer thread failed');
      expect(warnings).toHaveLength(1);
      expect(store.thread.ingest(json(unique('call')))).toBeUndefined();
    } finally {
      renameSync(moved, path);
      await store.close();
    }
  });

  it('routes test traffic on the thread as on the event loop: only to the sinks that take it (docs/reference.md#test-traffic)', async () => {
    const file = join(dir, 'test-traffic.json');
    writeFileSync(
      file,
      JSON.stringify({
        sinks: [
          { name: 'file', type: 'jsonl', path: join(dir, 'test-traffic.jsonl') },
          { name: 'crm', type: 'http', url: 'http://127.0.0.1:9/calls' },
          { name: 'staging', type: 'http', url: 'http://127.0.0.1:9/staging', test_traffic: true },
        ],
      }),
    );
    const routed = loadConfig({ CALLHOOK_API_KEYS: 'thread-intake-key-0123456789', CALLHOOK_CONFIG: file });
    const routedSpecs = await resolveSinks(routed.sinks);
    const threaded = openThreaded(join(dir, 'test-traffic.db'), routed, routedSpecs);
    const inPlace = openSqliteStore({ path: ':memory:' });
    const here = createRequestIntake({
      hooks: compileHooks(routed, routedSpecs),
      commit: (input) => inPlace.commitCall(input),
    });
    const sinksOf = async (store: Pick<Threaded['store'], 'listDeliveries'>, outcome: RequestOutcome) =>
      (await store.listDeliveries({ callId: (outcome as { reply: { id: string } }).reply.id }))
        .map((d) => d.sink)
        .sort();
    try {
      for (const source of ['replay', 'simulate', 'webhook'] as const) {
        const sent = (callId: string) => ({ ...json(callId), source });
        const there = await onThread(threaded, sent(unique('call')));
        const local = await here(sent(unique('call')));
        const expected = source === 'webhook' ? ['crm', 'file', 'staging'] : ['file', 'staging'];
        expect(await sinksOf(threaded.store, there), source).toEqual(expected);
        expect(await sinksOf(inPlace, local), source).toEqual(expected);
      }
    } finally {
      await threaded.close();
      await inPlace.close();
    }
  });

  it('writes an in-memory database in place, which no thread could open', async () => {
    const handed: unknown[] = [];
    const memory = openSqliteStore({
      path: ':memory:',
      remote: (write) => (handed.push(write), Promise.resolve(undefined)),
    });
    const here = createRequestIntake({
      hooks: compileHooks(config, specs),
      commit: (input) => memory.commitCall(input),
    });
    try {
      const outcome = await here(json(unique('call')));
      expect(outcome).toMatchObject({ reply: { status: 'accepted' } });
      expect(await memory.getCall((outcome as { reply: { id: string } }).reply.id)).toBeDefined();
      expect(handed).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});
