import { type AuditAction, type AuditLog, audited } from '../operators/audit.js';
import type { Actor } from '../operators/roles.js';
import type { AdminOperations } from './operations.js';

/**
 * The operator's operations as one person does them (docs/reference.md#audit-log): the same objects as
 * admin/operations.ts builds, whose every changing method keeps an entry in the audit log with who did it, from
 * where, what it touched and how it ended, and the operations that keep who acted (an edit and a review mark, an
 * incident's acknowledgement, an erasure) keep the actor's name. Written once for the admin API and the dashboard:
 * each request takes `auditedOperations(ops, audit)(actor)` and acts through it.
 *
 * An entry never holds a value a person typed: an edit keeps the names of the fields it changed, a bulk retry its
 * count, an erasure its counts and the person's keyed hash. What only reads is passed through as it is; so is a dry
 * run, which changes nothing.
 */
export function auditedOperations(ops: AdminOperations, audit: AuditLog): (actor: Actor) => AdminOperations {
  return (actor) => {
    const keep = <T>(
      action: AuditAction,
      target: string | null,
      change: () => Promise<T>,
      details?: (result: T) => Record<string, unknown> | undefined,
    ) => audited(audit, actor, action, target, change, details);
    const { calls, deliveries, receipts, sinks, incidents, privacy, redeliveries } = ops;
    return {
      ...ops,
      calls: {
        ...calls,
        editCall: (id, request) =>
          keep(
            'call.edit',
            id,
            () => calls.editCall(id, request, actor.name),
            (edited) => ({ fields: Object.keys(edited.edit?.fields ?? {}) }),
          ),
        markReviewed: (id) => keep('call.review', id, () => calls.markReviewed(id, actor.name)),
        releaseCall: (id) =>
          keep(
            'call.release',
            id,
            () => calls.releaseCall(id),
            ({ sinks }) => ({ sinks }),
          ),
        redeliverCall: (id, names) =>
          keep(
            'call.redeliver',
            id,
            () => calls.redeliverCall(id, names),
            ({ sinks, scheduled }) => ({ sinks, scheduled }),
          ),
      },
      deliveries: {
        ...deliveries,
        retryDeliveries: (query = {}) =>
          keep(
            'deliveries.retry',
            query.sink ?? null,
            () => deliveries.retryDeliveries(query),
            ({ retried }) => ({
              count: retried,
              state: query.state ?? 'dead',
              ...(query.callId === undefined ? {} : { call: query.callId }),
              ...(query.ids === undefined ? {} : { ids: query.ids }),
            }),
          ),
        retryDelivery: (id) => keep('delivery.retry', String(id), () => deliveries.retryDelivery(id)),
      },
      receipts: {
        ...receipts,
        ingestReceipt: (id, correction) =>
          keep(
            'receipt.ingest',
            String(id),
            () => receipts.ingestReceipt(id, correction),
            ({ reply }) => ({
              call: reply.id,
              status: reply.status,
              // Whether the body was corrected, never the body: it is the caller's data.
              corrected: correction?.body !== undefined || correction?.contentType !== undefined,
            }),
          ),
      },
      sinks: {
        ...sinks,
        pauseSink: (name, paused) =>
          keep(paused ? 'sink.pause' : 'sink.resume', name, () => sinks.pauseSink(name, paused)),
      },
      redeliveries: {
        ...redeliveries,
        redeliverPeriod: (sink, request) =>
          request.dry_run
            ? redeliveries.redeliverPeriod(sink, request)
            : keep(
                'sink.redeliver',
                sink,
                () => redeliveries.redeliverPeriod(sink, request),
                (job) => ({ from: job.from, to: job.to, job: job.id }),
              ),
      },
      incidents: {
        ...incidents,
        acknowledge: (id) => keep('incident.ack', id, () => incidents.acknowledge(id, actor.name)),
      },
      privacy: {
        ...privacy,
        erase: async (person, { dryRun }) => {
          if (dryRun) return privacy.erase(person, { dryRun, actor: actor.name });
          // An erasure is named by the person's keyed hash, as the erasure log keeps it; a person that cannot be read
          // is refused by erase itself, and kept with no target.
          const hash = await privacy.personHash(person).catch(() => null);
          return keep(
            'person.erase',
            hash,
            () => privacy.erase(person, { dryRun, actor: actor.name }),
            ({ erased }) => ({ ...erased, hash }),
          );
        },
      },
    };
  };
}
