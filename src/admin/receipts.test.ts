import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { CallhookError } from '../errors.js';
import { buildIntake } from '../intake/intake.js';
import { compileHooks } from '../intake/pipeline.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { correctionOf, ingestReceipt, listReceipts, type ReceiptsDeps, receiptId, showReceipt } from './receipts.js';

/**
 * The receipt operations (docs/reference.md#refused-requests) on a real store: list, show, and a refused request
 * ingested again.
 */

let store: Store;
let deps: ReceiptsDeps;
let woken = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
  config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks: ['jsonl'] });
  const hooks = compileHooks(config);
  woken = 0;
  const intake = buildIntake({ store, hooks, onCommitted: () => woken++ });
  deps = { store, hooks, ingest: intake.ingestRequest, bodyLimitBytes: 1024 };
});
afterEach(() => store.close());

const refuse = async (body: string, at = '2026-11-21T10:00:00.000Z') => {
  const rawBody = new TextEncoder().encode(body);
  await store.recordRejection({
    hook: 'end-of-call',
    receivedAt: at,
    method: 'POST',
    contentType: 'application/json',
    size: rawBody.byteLength,
    status: 400,
    outcome: 'rejected',
    error: 'invalid JSON',
    rawBody,
  });
  return (await store.listReceiptPage({ order: 'desc', limit: 1 }))[0]!.id;
};

const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CallhookError);
  return { status: (err as CallhookError).status, message: (err as CallhookError).message };
};

describe('listReceipts and showReceipt', () => {
  it('pages receipts by outcome with the next cursor, null on the last page', async () => {
    const ids = [await refuse('{a'), await refuse('{b'), await refuse('{c')];
    const first = await listReceipts(deps, { outcome: 'rejected', order: 'desc', limit: 2 });
    expect(first.receipts.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect(first.next).toBe(ids[1]);
    expect(await listReceipts(deps, { outcome: 'rejected', order: 'desc', limit: 2, after: first.next! })).toEqual({
      receipts: [expect.objectContaining({ id: ids[0] })],
      next: null,
    });
    expect((await listReceipts(deps, { outcome: 'accepted', limit: 2 })).receipts).toEqual([]);
  });

  it('shows one receipt by id, given as text or a number; an id that is no receipt is a 404', async () => {
    const id = await refuse('{a');
    expect(await showReceipt(deps, String(id))).toMatchObject({ id, outcome: 'rejected', error: 'invalid JSON' });
    expect(await showReceipt(deps, id)).toMatchObject({ id });
    for (const bad of ['0', 'x', '1.5', String(id + 1)])
      expect(await refusal(showReceipt(deps, bad))).toEqual({
        status: 404,
        message: `Not found: no receipt with id ${bad}`,
      });
    expect(() => receiptId('NaN')).toThrow('no receipt with id NaN');
  });
});

describe('correctionOf', () => {
  it('reads the body as text or base64 and the content type, and leaves out what was not given', () => {
    expect(correctionOf({})).toEqual({});
    expect(correctionOf({ body: 'é' })).toEqual({ body: new Uint8Array([0xc3, 0xa9]) });
    expect(correctionOf({ body_base64: '/w==', content_type: null })).toEqual({
      body: new Uint8Array([0xff]),
      contentType: null,
    });
    expect(correctionOf({ body: '', content_type: 'text/plain' })).toEqual({
      body: new Uint8Array(0),
      contentType: 'text/plain',
    });
  });
});

describe('ingestReceipt', () => {
  it('stores a corrected refused request as recovered, wakes the worker, and refuses a second ingest', async () => {
    const id = await refuse('{"call_id": "lost-1", "first_name": ');
    expect(await refusal(ingestReceipt(deps, id))).toMatchObject({ status: 400 });
    expect(woken).toBe(0);
    const { receipt, reply } = await ingestReceipt(
      deps,
      String(id),
      correctionOf({ body: '{"call_id": "lost-1", "first_name": "Asha"}' }),
    );
    expect(receipt).toBe(id);
    expect(reply).toMatchObject({ status: 'accepted' });
    expect(woken).toBe(1);
    expect((await store.getCall(reply.id))!.record).toMatchObject({
      source: 'recovered',
      data: { first_name: 'Asha' },
    });
    expect(await refusal(ingestReceipt(deps, id))).toEqual({
      status: 409,
      message: `Conflict: receipt ${id} was ingested already, as call ${reply.id}`,
    });
  });
});
