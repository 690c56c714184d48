import type { Logger } from 'pino';
import { CallhookError } from '../errors.js';
import type { AuditInput, OperatorStore } from '../store/operators.js';
import type { Actor } from './roles.js';

/**
 * The audit log (docs/reference.md#audit-log): every change a person makes through callhook, every sign-in and every
 * failed one, with who, when, from where, what it touched and how it ended. Entries are appended and never changed;
 * only retention.audit ages them out. What an entry keeps is named here, in one list, and never holds a value a
 * person typed: an edit keeps the names of the fields it changed, an erasure its counts and keyed hash.
 */

/** Every action the log knows, as it is written and filtered on. */
export const AUDIT_ACTIONS = [
  'call.edit',
  'call.review',
  'call.release',
  'call.redeliver',
  'delivery.retry',
  'deliveries.retry',
  'receipt.ingest',
  'sink.pause',
  'sink.resume',
  'sink.redeliver',
  'incident.ack',
  'person.erase',
  'purge',
  'user.add',
  'user.role',
  'user.remove',
  'user.reset',
  'user.password',
  'token.add',
  'token.revoke',
  'sign-in',
  'sign-out',
  'forbidden',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditLog {
  /**
   * Appends one entry. A failure to keep it is logged and does not undo or fail the change it describes: the change is
   * committed already, and refusing to answer would make the caller think it was not.
   */
  record(
    actor: Pick<Actor, 'name' | 'address'>,
    action: AuditAction,
    target: string | null,
    outcome: string,
    details?: Record<string, unknown>,
  ): Promise<void>;
}

export function createAuditLog({
  store,
  log,
  now = () => new Date(),
}: {
  store: Pick<OperatorStore, 'appendAudit'>;
  log: Logger;
  now?: () => Date;
}): AuditLog {
  return {
    async record(actor, action, target, outcome, details) {
      const entry: AuditInput = {
        at: now().toISOString(),
        actor: actor.name,
        address: actor.address || null,
        action,
        target,
        outcome,
        details: details ?? null,
      };
      try {
        await store.appendAudit([entry]);
      } catch (err) {
        log.error({ err, action, outcome }, 'audit: an entry could not be kept');
      }
    },
  };
}

/**
 * Runs a change and keeps it in the log: outcome `ok` with what `details` reads from the result, or the error code it
 * failed with (the error is thrown on, as it was).
 */
export async function audited<T>(
  audit: AuditLog,
  actor: Pick<Actor, 'name' | 'address'>,
  action: AuditAction,
  target: string | null,
  change: () => Promise<T>,
  details?: (result: T) => Record<string, unknown> | undefined,
): Promise<T> {
  let result: T;
  try {
    result = await change();
  } catch (err) {
    await audit.record(actor, action, target, err instanceof CallhookError ? err.code : 'INTERNAL');
    throw err;
  }
  await audit.record(actor, action, target, 'ok', details?.(result));
  return result;
}
