import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleCall } from '../../test/helpers/server.js';
import { loadConfig } from '../config.js';
import { compileHooks, createIntake, type Hook } from '../intake/pipeline.js';
import type { RawRequest, RecordSource } from '../record.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { type CallOperations, type CallsQuery, callOperations } from './calls.js';
import { editableFields } from './edit-rules.js';

/**
 * The call operations and the edit rules (docs/reference.md#editing-a-call) on a real store, with the default hook's
 * parameters.
 */

const RAW: RawRequest = { method: 'POST', content_type: 'application/json', query: {}, body: '{"first_name":"Asha"}' };

let store: Store;
let hooks: Map<string, Hook>;
let ops: CallOperations;
let woken = 0;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
  const held = { ...config.hooks.get('end-of-call')!, name: 'held', on_problem: 'hold' as const, sinks: ['jsonl'] };
  config.hooks.set('held', held);
  config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks: ['jsonl'] });
  hooks = compileHooks(config);
  woken = 0;
  let clock = Date.parse('2026-11-21T10:00:00Z');
  ops = callOperations({
    store,
    hooks,
    sinkNames: ['jsonl'],
    notify: () => woken++,
    now: () => new Date((clock += 1000)),
  });
});
afterEach(() => store.close());

async function receive(hook: string, body: Record<string, unknown>, source: RecordSource = 'webhook') {
  const ingest = createIntake({ store });
  const receipt = {
    hook,
    receivedAt: new Date().toISOString(),
    method: 'POST',
    contentType: 'application/json',
    size: 2,
  };
  return ingest({ hook: hooks.get(hook)!, fields: body, raw: RAW, source, receipt });
}

describe('editCall', () => {
  it('changes only the fields named, normalised as at intake, and keeps before and after in a new revision', async () => {
    const { id } = await receive('end-of-call', sampleCall({ sentiment_analysis: 'positive' }));
    const before = (await ops.showCall(id)).record;
    const reply = await ops.editCall(id, {
      data: { phone_number: '098123 45679', call_date: '22/11/2026', call_duration: '2 lakh' },
    });
    expect(reply.record.data).toEqual({
      ...before.data,
      phone_number: '+919812345679',
      call_date: '2026-11-22',
      call_duration: 200000,
    });
    expect(reply.record).toMatchObject({
      revision: 2,
      extra: before.extra,
      dedup_key: before.dedup_key,
      received_at: before.received_at,
    });
    expect(reply.edit).toEqual({
      at: '2026-11-21T10:00:01.000Z',
      revision: 2,
      fields: {
        phone_number: { before: '+919812345678', after: '+919812345679' },
        call_date: { before: '2026-11-21', after: '2026-11-22' },
        call_duration: { before: 184, after: 200000 },
      },
    });
    const shown = await ops.showCall(id);
    expect(shown.record).toEqual(reply.record);
    expect(shown.edits).toEqual([reply.edit]);
    // The raw request is never changed, and an edit never redelivers by itself.
    expect(shown.raw).toEqual(RAW);
    expect(woken).toBe(0);
  });

  it('takes a problem away from a field fixed and gives one, with the value as received, to a field made invalid', async () => {
    const { id } = await receive('end-of-call', sampleCall({ email_address: 'asha@', first_name: '' }));
    expect((await ops.showCall(id)).record.problems.map((p) => [p.field, p.code])).toEqual([
      ['first_name', 'missing_required'],
      ['email_address', 'invalid_format'],
    ]);
    const reply = await ops.editCall(id, {
      data: { first_name: 'Asha', email_address: 'asha@example.com', call_date: '31/02/2026' },
    });
    expect(reply.problems).toEqual([
      {
        field: 'call_date',
        code: 'invalid_format',
        message: expect.stringContaining('is not a valid date'),
        value: '31/02/2026',
      },
    ]);
    expect(reply.record.problems).toEqual(reply.problems);
    expect(reply.record.data).toMatchObject({ first_name: 'Asha', email_address: 'asha@example.com' });
    expect(reply.record.data).not.toHaveProperty('call_date');
    // before: the value in data, or as received while it had a problem; absent when it had none.
    expect(reply.edit!.fields).toEqual({
      first_name: { after: 'Asha' },
      email_address: { before: 'asha@', after: 'asha@example.com' },
      call_date: { before: '2026-11-21', after: '31/02/2026' },
    });
    // Emptying a required field makes it missing; emptying an optional one takes it away.
    const emptied = await ops.editCall(id, { data: { first_name: null, email_address: '' } });
    expect(emptied.edit!.fields).toEqual({
      first_name: { before: 'Asha' },
      email_address: { before: 'asha@example.com' },
    });
    expect(emptied.problems.map((p) => [p.field, p.code])).toEqual([
      ['first_name', 'missing_required'],
      ['call_date', 'invalid_format'],
    ]);
    expect(emptied.record).toMatchObject({ revision: 3 });
  });

  it('counts a revision per edit that changes something, and stores nothing when no field comes out other than it was', async () => {
    const { id } = await receive('end-of-call', sampleCall());
    const same = await ops.editCall(id, { data: { first_name: ' Asha ', phone_number: '98123 45678' } });
    expect(same.edit).toBeNull();
    expect(same.record.revision).toBe(1);
    for (const name of ['Asha Rao', 'Asha R.', 'Asha']) await ops.editCall(id, { data: { first_name: name } });
    const shown = await ops.showCall(id);
    expect(shown.record.revision).toBe(4);
    expect(shown.edits.map((e) => [e.revision, e.fields.first_name])).toEqual([
      [2, { before: 'Asha', after: 'Asha Rao' }],
      [3, { before: 'Asha Rao', after: 'Asha R.' }],
      [4, { before: 'Asha R.', after: 'Asha' }],
    ]);
  });

  it('refuses a field the hook does not declare (400, naming it), an unknown call (404), and loses no edit to a race', async () => {
    const { id } = await receive('end-of-call', sampleCall({ call_duration: '0' }));
    await expect(ops.editCall(id, { data: { first_name: 'A', call_id: 'x' } })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(
        /^Bad request: data\.call_id: not a parameter of the hook end-of-call \(parameters: first_name, /,
      ),
    });
    await expect(ops.editCall('0190-nope', { data: { first_name: 'A' } })).rejects.toMatchObject({
      status: 404,
      message: 'Not found: no call with id 0190-nope',
    });
    expect((await ops.showCall(id)).record.revision).toBe(1);
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        ops.editCall(id, { data: { [i % 2 ? 'order_id' : 'product_name']: `v${i}` } }),
      ),
    );
    const shown = await ops.showCall(id);
    expect(shown.edits).toHaveLength(8);
    expect(shown.record.revision).toBe(9);
    expect(shown.edits.map((e) => e.revision)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('leaves what a repeat is compared with as first received: the original request is still a duplicate', async () => {
    const body = sampleCall({ call_id: 'dup-1' });
    const { id } = await receive('end-of-call', body);
    await ops.editCall(id, { data: { first_name: 'Someone' } });
    expect(await receive('end-of-call', body)).toMatchObject({ status: 'duplicate', id });
  });
});

describe('editableFields', () => {
  it('gives one field per declared parameter, prefilled with the value in data or, with a problem, as received', async () => {
    const { id } = await receive('end-of-call', sampleCall({ first_name: '', email_address: 'asha@' }));
    const form = editableFields((await ops.showCall(id)).record, hooks.get('end-of-call')!.parameters);
    expect(form.map((f) => f.parameter.identifier)).toEqual(
      hooks.get('end-of-call')!.parameters.parameters.map((p) => p.identifier),
    );
    const byName = new Map(form.map((f) => [f.parameter.identifier, f]));
    expect(byName.get('first_name')).toMatchObject({
      parameter: { required: true },
      problem: { code: 'missing_required' },
    });
    expect(byName.get('first_name')).not.toHaveProperty('value');
    expect(byName.get('email_address')).toMatchObject({ value: 'asha@', problem: { code: 'invalid_format' } });
    expect(byName.get('phone_number')).toEqual({
      parameter: expect.objectContaining({ identifier: 'phone_number' }),
      value: '+919812345678',
    });
  });
});

describe('markReviewed and reviewQueue', () => {
  it('lists held calls and calls with problems not reviewed, oldest first; a mark is kept with the edits', async () => {
    const clean = await receive('end-of-call', sampleCall());
    const flawed = await receive('end-of-call', sampleCall({ email_address: 'nope' }));
    const held = await receive('held', sampleCall({ first_name: '' }));
    expect(held.status).toBe('held');
    const queue = async () => (await ops.reviewQueue({ limit: 50 })).calls.map((c) => c.record.id);
    expect(await queue()).toEqual([flawed.id, held.id]);

    await expect(ops.markReviewed(clean.id)).rejects.toMatchObject({ status: 409 });
    const marked = await ops.markReviewed(flawed.id);
    expect(marked.edit).toEqual({ at: expect.any(String), fields: {}, revision: 1, reviewed: true });
    // Marked twice, it keeps the one mark.
    expect((await ops.markReviewed(flawed.id)).edit).toEqual(marked.edit);
    expect((await ops.showCall(flawed.id)).edits).toEqual([marked.edit]);
    expect((await ops.showCall(flawed.id)).record.revision).toBe(1);
    expect(await queue()).toEqual([held.id]);
  });
});

describe('listCalls and reviewQueue with test traffic', () => {
  it('list it only when asked, by testCalls or a source that names it, and never queue it for review (docs/reference.md#test-traffic)', async () => {
    const real = await receive('end-of-call', sampleCall({ email_address: 'nope' }));
    const replayed = await receive('end-of-call', sampleCall({ email_address: 'nope' }), 'replay');
    const simulated = await receive('held', sampleCall({ first_name: '' }), 'simulate');
    expect(simulated.status).toBe('held');
    const listed = async (query: Partial<CallsQuery>) =>
      (await ops.listCalls({ limit: 50, ...query })).calls.map((c) => c.record.id);
    expect(await listed({})).toEqual([real.id]);
    expect(await listed({ testCalls: true })).toEqual([real.id, replayed.id, simulated.id]);
    expect(await listed({ source: 'replay' })).toEqual([replayed.id]);
    expect(await listed({ source: 'webhook', testCalls: true })).toEqual([real.id]);
    expect((await ops.reviewQueue({ limit: 50 })).calls.map((c) => c.record.id)).toEqual([real.id]);
    expect((await ops.reviewQueue({ limit: 50, testCalls: true })).calls.map((c) => c.record.id)).toEqual([real.id]);
  });
});

describe('releaseCall and redeliverCall', () => {
  it('releases a held call with its corrected fields to the sinks that want it, once', async () => {
    const held = await receive('held', sampleCall({ first_name: '', phone_number: '12' }));
    const edited = await ops.editCall(held.id, { data: { first_name: 'Asha', phone_number: '98123 45678' } });
    expect(edited.problems).toEqual([]);
    expect((await ops.showCall(held.id)).status).toBe('held');
    expect(await ops.releaseCall(held.id)).toEqual({ id: held.id, status: 'accepted', sinks: ['jsonl'] });
    expect(woken).toBe(1);
    const [claimed] = await store.claimDeliveries('jsonl', 1, 60_000);
    expect(claimed!.record).toEqual(edited.record);
    await expect(ops.releaseCall(held.id)).rejects.toMatchObject({
      status: 409,
      message: `Conflict: call ${held.id} is not held`,
    });
    await expect(ops.releaseCall('nope')).rejects.toMatchObject({ status: 404 });
  });

  it('redelivers the record as it is now, to its sinks or the ones named, refusing an unknown sink', async () => {
    const { id } = await receive('end-of-call', sampleCall());
    const [first] = await store.claimDeliveries('jsonl', 1, 60_000);
    await store.finishAttempt(first!.id, first!.attempt, {
      startedAt: new Date().toISOString(),
      durationMs: 1,
      outcome: 'ok',
    });
    await ops.editCall(id, { data: { last_name: 'Rao' } });
    await expect(ops.redeliverCall(id, ['crm'])).rejects.toMatchObject({
      status: 400,
      message: 'Bad request: no sink is named crm (sinks: jsonl)',
    });
    expect(await ops.redeliverCall(id)).toEqual({ id, sinks: ['jsonl'], scheduled: 1 });
    const [again] = await store.claimDeliveries('jsonl', 1, 60_000);
    expect(again!.record).toMatchObject({ revision: 2, data: { last_name: 'Rao' } });
  });

  it('sends a test call only to the sinks that take test traffic, and refuses to name one that does not (docs/reference.md#test-traffic)', async () => {
    const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
    const sinks = ['jsonl', 'crm'];
    config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks });
    config.hooks.set('held', { ...config.hooks.get('end-of-call')!, name: 'held', on_problem: 'hold', sinks });
    hooks = compileHooks(config, [
      { name: 'jsonl', when: undefined, testTraffic: true },
      { name: 'crm', when: undefined, testTraffic: false },
    ]);
    const test = callOperations({ store, hooks, sinkNames: sinks, testSinks: ['jsonl'], notify: () => woken++ });
    const sinksOf = async (id: string) => (await store.listDeliveries({ callId: id })).map((d) => d.sink).sort();

    const real = await receive('end-of-call', sampleCall());
    const replayed = await receive('end-of-call', sampleCall(), 'replay');
    expect(await sinksOf(real.id)).toEqual(['crm', 'jsonl']);
    expect(await sinksOf(replayed.id)).toEqual(['jsonl']);

    // To every sink: those of its hook that take it. Named: refused when one does not, and nothing is scheduled.
    expect((await test.redeliverCall(replayed.id)).sinks).toEqual(['jsonl']);
    await expect(test.redeliverCall(replayed.id, ['jsonl', 'crm'])).rejects.toMatchObject({
      status: 400,
      message: `Bad request: sink crm does not take test traffic: call ${replayed.id} is a test call (source replay); set test_traffic: true on the sink to send it test calls`,
    });
    expect(await sinksOf(replayed.id)).toEqual(['jsonl']);
    expect(await test.redeliverCall(replayed.id, ['jsonl'])).toMatchObject({ sinks: ['jsonl'] });
    expect((await test.redeliverCall(real.id, ['crm'])).sinks).toEqual(['crm']);

    // Edited, then redelivered; held, then released: the same rule.
    await test.editCall(replayed.id, { data: { last_name: 'Rao' } });
    expect((await test.redeliverCall(replayed.id)).sinks).toEqual(['jsonl']);
    const held = await receive('held', sampleCall({ first_name: '' }), 'simulate');
    expect(held.status).toBe('held');
    expect(await test.releaseCall(held.id)).toMatchObject({ sinks: ['jsonl'] });
    expect(await sinksOf(held.id)).toEqual(['jsonl']);
  });
});
