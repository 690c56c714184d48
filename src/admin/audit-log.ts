import { CallhookError } from '../errors.js';
import type { AuditEntry, AuditQuery, OperatorStore } from '../store/operators.js';

/**
 * The audit log as an admin reads it (docs/reference.md#audit-log): `GET /admin/audit`, `callhook audit list` through
 * it, and the dashboard's `/ui/audit`. Newest first, a page at a time, filtered by actor, action, target and time.
 * Nothing here changes an entry: the log is appended to by the changes themselves (operators/audit.ts).
 */

/** One entry in the admin API's words: the store's fields, named alike. */
export type AuditEntryView = AuditEntry;

export interface AuditPage {
  entries: AuditEntryView[];
  /** The `before` of the next page (older entries); null on the last. */
  next: number | null;
}

export interface AuditReader {
  list(query: AuditQuery): Promise<AuditPage>;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export function auditReader({ store }: { store: Pick<OperatorStore, 'listAudit'> }): AuditReader {
  return {
    async list({ limit = DEFAULT_LIMIT, ...query }) {
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT)
        throw new CallhookError('BAD_REQUEST', `limit: a whole number from 1 to ${MAX_LIMIT}`);
      if (query.from !== undefined && query.to !== undefined && query.from >= query.to)
        throw new CallhookError('BAD_REQUEST', `from: ${query.from} is not before to: ${query.to}`);
      // One more than asked for says whether there is a next page without a count.
      const entries = await store.listAudit({ ...query, limit: limit + 1 });
      const page = entries.slice(0, limit);
      return { entries: page.map(entryView), next: entries.length > limit ? page.at(-1)!.id : null };
    },
  };
}

export function entryView({ id, at, actor, address, action, target, outcome, details }: AuditEntry): AuditEntryView {
  return { id, at, actor, address, action, target, outcome, details };
}
