import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../src/record.js';
import type { CallEdit } from '../src/store/admin-queries.js';
import { storesUnderTest } from './helpers/database.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { ADMIN, jsonlRecords, KEY, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * Editing a call through the admin API (docs/reference.md#editing-a-call), end to end on both stores: PATCH with its
 * reply, the edits in GET, "save and release" of a held call, a redeliver of the new revision under its own idempotency
 * key, review marks and the review queue, and the errors.
 */

type Detail = {
  record: CallRecord;
  status: string;
  raw: { body: string };
  edits: CallEdit[];
  deliveries: { sink: string; state: string }[];
};

describe.each(storesUnderTest(serviceUrl('postgres'), 'callhook_edit'))('editing a call on %s', (_, open) => {
  let server: TestServer;
  let crm: Receiver;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const opened = await open();
    drop = opened.drop;
    crm = await startReceiver();
    server = await startServer({
      env: opened.env,
      config: {
        hooks: { 'end-of-call': { on_problem: 'deliver' }, held: { on_problem: 'hold' } },
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'crm', type: 'http', url: `${crm.url}/calls` },
        ],
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await crm?.close();
    await drop?.();
  });

  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const detail = async (id: string) => (await admin('GET', `/calls/${id}`)).body as Detail;
  const receive = async (hook: string, fields: Record<string, unknown>) => {
    const res = await post(server.url, fields, { hook });
    expect(res.status).toBe(200);
    return (await res.json()) as { id: string; status: string };
  };
  const lines = (id: string) => jsonlRecords(server.dataDir).filter((r) => r.id === id);

  it("saves a held call's corrections, then releases it: the jsonl sink gets the corrected record, the raw request stays", async () => {
    const body = sampleCall({ first_name: '', phone_number: '12345' });
    const held = await receive('held', body);
    expect(held.status).toBe('held');
    const patched = await admin('PATCH', `/calls/${held.id}`, {
      data: { first_name: 'Asha', phone_number: '098123 45678' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.problems).toEqual([]);
    expect(patched.body.record).toMatchObject({
      id: held.id,
      revision: 2,
      data: { first_name: 'Asha', phone_number: '+919812345678' },
      problems: [],
    });
    expect(patched.body.edit.fields).toEqual({
      first_name: { after: 'Asha' },
      phone_number: { before: '12345', after: '+919812345678' },
    });

    const shown = await detail(held.id);
    expect(shown.status).toBe('held');
    expect(shown.edits).toEqual([patched.body.edit]);
    expect(JSON.parse(shown.raw.body)).toEqual(body);
    expect(shown.deliveries).toEqual([]);

    expect((await admin('POST', `/calls/${held.id}/release`)).body).toEqual({
      id: held.id,
      status: 'accepted',
      sinks: ['jsonl', 'crm'],
    });
    await until(() => lines(held.id).length > 0);
    expect(lines(held.id)).toEqual([patched.body.record]);
    await until(() => crm.received.some((r) => r.headers['idempotency-key'] === `${held.id}:crm:r2`));
  });

  it('redelivers an edited call as its new revision: a second jsonl line, and an idempotency key naming the revision', async () => {
    const body = sampleCall();
    const call = await receive('end-of-call', body);
    await until(
      () => lines(call.id).length === 1 && crm.received.some((r) => r.headers['idempotency-key'] === `${call.id}:crm`),
    );
    const patched = await admin('PATCH', `/calls/${call.id}`, { data: { last_name: 'Rao', call_duration: '3,05' } });
    expect(patched.body.problems).toEqual([
      { field: 'call_duration', code: 'invalid_type', message: expect.any(String), value: '3,05' },
    ]);
    // Saving never redelivers by itself.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(lines(call.id)).toHaveLength(1);

    expect((await admin('POST', `/calls/${call.id}/redeliver`)).body).toEqual({
      id: call.id,
      sinks: ['jsonl', 'crm'],
      scheduled: 2,
    });
    await until(() => lines(call.id).length === 2);
    expect(lines(call.id).map((r) => [r.revision, (r.data as Record<string, unknown>).last_name])).toEqual([
      [1, 'Verma'],
      [2, 'Rao'],
    ]);
    const sent = await until(() => crm.received.find((r) => r.headers['idempotency-key'] === `${call.id}:crm:r2`));
    expect(JSON.parse(sent!.body)).toMatchObject({ revision: 2, data: { last_name: 'Rao' } });

    // A repeat of the request as it first came is still a duplicate of the call (docs/reference.md#deduplication).
    expect(await receive('end-of-call', body)).toMatchObject({ status: 'duplicate', id: call.id });
  });

  it('marks a call reviewed, and lists the review queue oldest first', async () => {
    const flawed = await receive('end-of-call', sampleCall({ email_address: 'asha@' }));
    const held = await receive('held', sampleCall({ call_outcome: '' }));
    const queue = async () =>
      ((await admin('GET', '/calls?review=true&limit=500')).body.calls as { record: CallRecord }[]).map(
        (c) => c.record.id,
      );
    expect(await queue()).toEqual(expect.arrayContaining([flawed.id, held.id]));
    const marked = await admin('POST', `/calls/${flawed.id}/reviewed`);
    expect(marked.status).toBe(200);
    // Kept with who made it (docs/reference.md#operators): the admin token, here.
    expect(marked.body.edit).toEqual({
      at: expect.any(String),
      fields: {},
      revision: 1,
      reviewed: true,
      by: 'admin-token',
    });
    expect(await queue()).not.toContain(flawed.id);
    expect(await queue()).toContain(held.id);
    expect((await detail(flawed.id)).edits).toEqual([marked.body.edit]);
    const clean = await receive('end-of-call', sampleCall());
    expect(await admin('POST', `/calls/${clean.id}/reviewed`)).toEqual({
      status: 409,
      body: { error: 409, message: `Conflict: call ${clean.id} has no problems to review` },
    });
  });

  it('answers what is wrong with an edit as the Error object, masked as every admin reply', async () => {
    const call = await receive('end-of-call', sampleCall());
    const bad = async (body: unknown, status = 400) => {
      const res = await admin('PATCH', `/calls/${call.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      return res.body.message as string;
    };
    expect(await bad({ data: { colour: 'red' } })).toMatch(
      /^Bad request: data\.colour: not a parameter of the hook end-of-call \(parameters: first_name, last_name, /,
    );
    expect(await bad({ data: {} })).toBe('Bad request: data: name at least one field to change');
    expect(await bad({ data: { first_name: { a: 1 } } })).toMatch(/^Bad request: data\.first_name: /);
    expect(await bad({ first_name: 'x' })).toMatch(/^Bad request: (data|first_name): /);
    expect(await bad('{"data": ')).toBe('Bad request: the body is not JSON');
    expect((await admin('PATCH', '/calls/no-such-call', { data: { first_name: 'x' } })).body).toEqual({
      error: 404,
      message: 'Not found: no call with id no-such-call',
    });
    // A secret typed into a field comes back masked, as in every admin reply (docs/reference.md#secrets).
    const masked = await admin('PATCH', `/calls/${call.id}`, { data: { first_name: KEY } });
    expect(masked.status).toBe(200);
    expect(JSON.stringify(masked.body)).not.toContain(KEY);
    expect(masked.body.record.data.first_name).toBe('***');
    const noToken = await fetch(`${server.url}/admin/calls/${call.id}`, {
      method: 'PATCH',
      body: '{"data":{"first_name":"x"}}',
    });
    expect(noToken.status).toBe(401);
  });
});
