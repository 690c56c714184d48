import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleCall } from '../../test/helpers/server.js';
import { deadDeliveryIncident } from '../../test/helpers/store-inputs.js';
import { loadConfig } from '../config.js';
import { CallhookError } from '../errors.js';
import { buildIntake, type Intake } from '../intake/intake.js';
import { compileHooks } from '../intake/pipeline.js';
import { createAuditLog } from '../operators/audit.js';
import type { Actor } from '../operators/roles.js';
import type { AuditInput } from '../store/operators.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import type { Store } from '../store/store.js';
import { auditedOperations } from './audited.js';
import { type AdminOperations, adminOperations } from './operations.js';

/**
 * The operations as one person does them (docs/reference.md#audit-log): each change kept with who, from where, what it
 * touched and how it ended, and never a value typed; the operations that keep who acted keep the actor's name. On a
 * real store; the log's entries are kept in memory, as the store's appendAudit would be handed them.
 */

const ANA: Actor = { name: 'ana@example.com', role: 'operator', userId: 'u1', via: 'token', address: '203.0.113.7' };

let store: Store;
let ops: AdminOperations;
let entries: AuditInput[];
let as: (actor: Actor) => AdminOperations;
let intake: Intake;

beforeEach(() => {
  store = openSqliteStore({ path: ':memory:' });
  const config = loadConfig({ CALLHOOK_API_KEYS: 'test-key-0123456789abcdef' });
  config.hooks.set('end-of-call', { ...config.hooks.get('end-of-call')!, sinks: ['crm'] });
  config.hooks.set('held', { ...config.hooks.get('end-of-call')!, name: 'held', on_problem: 'hold', sinks: ['crm'] });
  intake = buildIntake({ store, hooks: compileHooks(config) });
  ops = adminOperations({
    store,
    intake,
    sinks: [{ name: 'crm', type: 'webhook', pausedByDefault: false }],
    notify: () => {},
    bodyLimitBytes: 64 * 1024,
  });
  entries = [];
  const audit = createAuditLog({
    store: { appendAudit: async (given) => void entries.push(...given) },
    log: pino({ level: 'silent' }),
    now: () => new Date('2026-11-27T09:00:00.000Z'),
  });
  as = auditedOperations(ops, audit);
});
afterEach(() => store.close());

async function receive(hook: string, fields: Record<string, unknown>): Promise<string> {
  const body = new TextEncoder().encode(JSON.stringify(fields));
  const outcome = await intake.ingestRequest({
    hook,
    method: 'POST',
    contentType: 'application/json',
    search: '',
    body,
    receivedAt: new Date().toISOString(),
    source: 'webhook',
  });
  if (!('reply' in outcome)) throw new Error(`refused: ${JSON.stringify(outcome)}`);
  return outcome.reply.id;
}

describe('auditedOperations', () => {
  it("keeps an edit with the names of the fields it changed, never their values, and the edit keeps the actor's name", async () => {
    const id = await receive('end-of-call', sampleCall({ first_name: 'Asha' }));
    const edited = await as(ANA).calls.editCall(id, { data: { first_name: 'Asha Rao', call_duration: '95' } });
    expect(edited.edit?.by).toBe(ANA.name);
    expect(entries).toEqual([
      {
        at: '2026-11-27T09:00:00.000Z',
        actor: ANA.name,
        address: ANA.address,
        action: 'call.edit',
        target: id,
        outcome: 'ok',
        details: { fields: ['first_name', 'call_duration'] },
      },
    ]);
    expect(JSON.stringify(entries)).not.toContain('Asha Rao');
    const kept = await ops.calls.showCall(id);
    expect(kept.edits.map((e) => e.by)).toEqual([ANA.name]);
  });

  it('keeps a refused change with its error code, and throws the error on as it was', async () => {
    const id = await receive('end-of-call', sampleCall());
    const refused = await as(ANA)
      .calls.releaseCall(id)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(CallhookError);
    expect((refused as CallhookError).code).toBe('CONFLICT');
    expect(entries.map(({ action, target, outcome, details }) => ({ action, target, outcome, details }))).toEqual([
      { action: 'call.release', target: id, outcome: 'CONFLICT', details: null },
    ]);
  });

  it('keeps a review mark with who made it, a release with its sinks, a redelivery with what it scheduled', async () => {
    const id = await receive('held', sampleCall({ phone_number: 'not a number' }));
    const reviewed = await as(ANA).calls.markReviewed(id);
    expect(reviewed.edit.by).toBe(ANA.name);
    await as(ANA).calls.releaseCall(id);
    await as(ANA).calls.redeliverCall(id, ['crm']);
    expect(entries.map(({ action, target, outcome, details }) => ({ action, target, outcome, details }))).toEqual([
      { action: 'call.review', target: id, outcome: 'ok', details: null },
      { action: 'call.release', target: id, outcome: 'ok', details: { sinks: ['crm'] } },
      { action: 'call.redeliver', target: id, outcome: 'ok', details: { sinks: ['crm'], scheduled: 0 } },
    ]);
  });

  it('keeps retries with their count, pauses and resumes by sink, and passes reads through unkept', async () => {
    await as(ANA).calls.listCalls({ limit: 10 });
    await as(ANA).sinks.listSinks();
    await as(ANA).deliveries.retryDeliveries({ sink: 'crm' });
    await expect(as(ANA).deliveries.retryDelivery('7')).rejects.toThrow(/does not exist or is not dead/);
    await as(ANA).sinks.pauseSink('crm', true);
    await as(ANA).sinks.pauseSink('crm', false);
    expect(entries.map(({ action, target, outcome, details }) => ({ action, target, outcome, details }))).toEqual([
      { action: 'deliveries.retry', target: 'crm', outcome: 'ok', details: { count: 0, state: 'dead' } },
      { action: 'delivery.retry', target: '7', outcome: 'CONFLICT', details: null },
      { action: 'sink.pause', target: 'crm', outcome: 'ok', details: null },
      { action: 'sink.resume', target: 'crm', outcome: 'ok', details: null },
    ]);
  });

  it("acknowledges an incident in the actor's name, whatever name the caller gives", async () => {
    const incident = await deadDeliveryIncident(store, 'crm');
    const acknowledged = await as(ANA).incidents.acknowledge(incident.id, 'someone-else');
    expect(acknowledged.acknowledged_by).toBe(ANA.name);
    expect(entries.map(({ action, target, outcome }) => ({ action, target, outcome }))).toEqual([
      { action: 'incident.ack', target: incident.id, outcome: 'ok' },
    ]);
  });

  it("keeps an erasure by the person's keyed hash with its counts, never the number; a dry run is not kept", async () => {
    await receive('end-of-call', sampleCall({ phone_number: '+919812345678' }));
    const person = { phone: '+91 98123 45678' };
    await as(ANA).privacy.erase(person, { dryRun: true, actor: 'ignored' });
    expect(entries).toEqual([]);
    const hash = await ops.privacy.personHash(person);
    await as(ANA).privacy.erase(person, { dryRun: false, actor: 'ignored' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'person.erase', target: hash, outcome: 'ok' });
    expect(entries[0]!.details).toMatchObject({ calls: 1, hash });
    expect(JSON.stringify(entries)).not.toMatch(/9812345678|98123/);
    const check = await ops.privacy.check(person);
    expect(check.erasures.map((e) => e.actor)).toEqual([ANA.name]);
  });
});
