import type { AdminQueries } from './admin-queries.js';
import type { CallStore } from './calls.js';
import type { IncidentStore } from './incidents.js';
import type { Maintenance } from './maintenance.js';
import type { OperatorStore } from './operators.js';
import type { Outbox } from './outbox.js';
import type { PrivacyStore } from './privacy.js';
import type { RetentionStore } from './retention.js';

/**
 * What the rest of callhook needs from durable storage. Two implementations keep it: SQLite (one machine)
 * and PostgreSQL (several replicas). Every write that precedes a 200 is committed before its promise resolves.
 *
 * The whole is what a store opens as (open.ts) and what the process that opened it holds; everything else takes
 * the part it uses: the intake and the webhook route `CallStore` (calls.ts), the delivery worker `Outbox`
 * (outbox.ts), the admin operations, the dashboard, /metrics and reconcile `AdminQueries` (admin-queries.ts),
 * start-up, /readyz, purge and shutdown `Maintenance` (maintenance.ts), the alerts `IncidentStore` (incidents.ts), a
 * person's access and erasure `PrivacyStore` (privacy.ts), the retention `RetentionStore` (retention.ts) with purge, and
 * the users, their tokens and sessions and the audit log `OperatorStore` (operators.ts).
 */
export interface Store
  extends CallStore,
    Outbox,
    AdminQueries,
    Maintenance,
    IncidentStore,
    PrivacyStore,
    RetentionStore,
    OperatorStore {
  readonly kind: 'sqlite' | 'postgres';
  /**
   * Generated keys kept where every replica reads them (docs/reference.md#start-and-set-up: with DATABASE_URL, made
   * once by the replica that starts first). PostgreSQL only: SQLite's serve keeps them in files in its data dir.
   */
  keptKeys?: KeptKeysStore;
}

/** Keys by name (`api-keys`, `admin-token`), newest first, as the data dir's key files hold them. */
export interface KeptKeysStore {
  /** The keys kept under `name`; when there are none yet, `keys` are kept, and `created` says this call kept them. */
  ensure(name: string, keys: readonly string[]): Promise<{ keys: string[]; created: boolean }>;
  /** The keys kept under `name`, or undefined when none ever were. */
  read(name: string): Promise<string[] | undefined>;
  /** Keeps `key` first under `name`, before the keys kept already, or alone when `replace`. */
  add(name: string, key: string, replace: boolean): Promise<void>;
}

/** What each store's admin module answers (sqlite/admin.ts, postgres/admin.ts): the reads, retries, releases and edits. */
export type AdminReadsAndEdits = Pick<
  Store,
  | 'getCall'
  | 'listCalls'
  | 'callerHistory'
  | 'deliveryStats'
  | 'listDeliveries'
  | 'listAttempts'
  | 'listReceipts'
  | 'listReceiptPage'
  | 'getReceipt'
  | 'retryDeliveries'
  | 'redeliver'
  | 'release'
  | 'editCall'
  | 'listEdits'
>;
