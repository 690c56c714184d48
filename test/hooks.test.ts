import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { appOn } from './helpers/app.js';
import { ADMIN, KEY, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/** Hooks declared in the config file: their own parameters, keys, dedup fields, sinks and on_problem. */

const HOOK_KEY = 'orders-key-0123456789abcdef';
let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    config: {
      sinks: [
        { name: 'log', type: 'log' },
        { name: 'jsonl', type: 'jsonl' },
      ],
      hooks: {
        'end-of-call': {},
        orders: {
          parameters: [
            { identifier: 'order_id', type: 'string', required: true, description: 'Order referenced' },
            { identifier: 'quantity', type: 'number', required: true },
            { identifier: 'gift', type: 'boolean' },
            { identifier: 'channel', type: 'string', format: 'enum', values: ['phone', 'WhatsApp'] },
          ],
          keys: [HOOK_KEY],
          dedup: ['order_id'],
          on_problem: 'hold',
          sinks: ['log'],
        },
      },
    },
  });
});
afterAll(() => server.close());

const admin = async (id: string) =>
  (
    await fetch(`${server.url}/admin/calls/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
  ).json() as Promise<any>;

describe('declared hooks', () => {
  it('normalises against the hook’s own parameters and dedups on its own field', async () => {
    const res = await fetch(`${server.url}/webhooks/orders`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${HOOK_KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'order_id=ORD-9&quantity=%203%20&gift=YES&channel=whatsapp&note=ring%20twice',
    });
    const reply = await res.json();
    expect(reply).toEqual({ status: 'accepted', id: expect.any(String), dedup_key: 'order_id:ORD-9', problems: [] });
    const call = await admin(reply.id);
    expect(call.record.data).toEqual({ order_id: 'ORD-9', quantity: 3, gift: true, channel: 'WhatsApp' });
    expect(call.record.extra).toEqual({ note: 'ring twice' });
    expect(call.status).toBe('accepted');
  });

  it('accepts only its own keys', async () => {
    expect((await post(server.url, { order_id: 'ORD-1', quantity: 1 }, { hook: 'orders' })).status).toBe(401);
    expect((await post(server.url, sampleCall(), { key: HOOK_KEY })).status).toBe(401);
  });

  it('holds a call with problems when on_problem is hold, with no delivery', async () => {
    const res = await post(server.url, { order_id: 'ORD-10', quantity: 'many' }, { hook: 'orders', key: HOOK_KEY });
    const reply = await res.json();
    expect(res.status).toBe(200);
    expect(reply).toMatchObject({
      status: 'held',
      dedup_key: 'order_id:ORD-10',
      problems: [{ field: 'quantity', code: 'invalid_type' }],
    });
    expect((await admin(reply.id)).status).toBe('held');
    expect((await admin(reply.id)).deliveries).toEqual([]);
  });

  it('releases a held call through the admin API, once', async () => {
    const { id } = await (
      await post(server.url, { order_id: 'ORD-11', quantity: 'lots' }, { hook: 'orders', key: HOOK_KEY })
    ).json();
    const release = () =>
      fetch(`${server.url}/admin/calls/${id}/release`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
      });
    const first = await release();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ id, status: 'accepted', sinks: ['log'] });
    await until(async () =>
      (await admin(id)).deliveries.some((d: { sink: string; state: string }) => d.sink === 'log' && d.state === 'done'),
    );
    expect((await admin(id)).status).toBe('accepted');
    const again = await release();
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ error: 409, message: expect.stringContaining('is not held') });
  });

  it('keeps the default hook beside it', async () => {
    expect((await post(server.url, sampleCall())).status).toBe(200);
  });
});

describe('a store that cannot commit', () => {
  const failing = (store: Store): Store => ({
    ...store,
    commitCall: async () => {
      throw new Error('SQLITE_FULL: database or disk is full');
    },
    ping: async () => {
      throw new Error('SQLITE_FULL: database or disk is full');
    },
  });

  it('answers 503 with the Error object, never a 200, and readiness turns 503', async () => {
    const app = appOn(failing(openSqliteStore({ path: ':memory:' })));
    const res = await app.request('/webhooks/end-of-call', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(sampleCall()),
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 503, message: 'The store cannot commit the call right now' });
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ error: 503, message: expect.stringContaining('store failing') });
  });
});
