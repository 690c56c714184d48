import type { Context, MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { CallOperations } from '../admin/calls.js';
import type { DeliveryOperations } from '../admin/deliveries.js';
import type { IncidentOperations } from '../admin/incidents.js';
import type { AdminOperations } from '../admin/operations.js';
import type { ReceiptOperations } from '../admin/receipts.js';
import type { SinkOperations } from '../admin/sinks.js';
import type { Hook } from '../intake/pipeline.js';
import type { ActorEnv } from '../operators/guard.js';
import type { Role } from '../operators/roles.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { Store } from '../store/store.js';
import type { Clock } from './time.js';

/** The dashboard's requests carry who made them (set by the session check, dashboard.tsx). */
export type WebEnv = ActorEnv;

/** What every page's routes read from: the serve's own store, hooks and sinks, and how to show what they hold. */
export interface WebContext {
  /** The admin queries, and for the overview which store it is and its probe. */
  store: AdminQueries & Pick<Store, 'kind' | 'ping'>;
  hooks: ReadonlyMap<string, Hook>;
  sinkNames: readonly string[];
  /** The sinks that take test traffic (docs/reference.md#test-traffic): a test call's page offers only these. */
  testSinks: readonly string[];
  /**
   * The operations acting as the request's signed-in person (admin/audited.ts): every change a form makes goes
   * through these, so the audit log keeps it with their name. The ones below are for reading.
   */
  act: (c: Context<WebEnv>) => AdminOperations;
  /**
   * The role a route needs, its first handler (operators/guard.ts): a request below it is refused with a 403 page,
   * kept in the audit log.
   */
  allow: (role: Role) => MiddlewareHandler<WebEnv>;
  /** The operations the admin API uses too, the very same objects (admin/operations.ts): one rule, written once. */
  calls: CallOperations;
  deliveries: DeliveryOperations;
  receipts: ReceiptOperations;
  sinks: SinkOperations;
  /** The alerts' incidents: the banner on every page reads the open ones, `/ui/incidents` lists and acknowledges. */
  incidents: IncidentOperations;
  clock: Clock;
  /**
   * A copy of a value with every configured secret masked (docs/reference.md#secrets and docs/reference.md#dashboard:
   * no page shows one), for whatever a page shows from the store or an error, before JSX escapes it.
   */
  shown: <T>(value: T) => T;
  /** Bytes with every secret masked, for a body shown in base64. */
  maskBody: (bytes: Uint8Array) => Uint8Array;
  workerRunning: () => boolean;
  accepting: () => boolean;
  /** Webhook requests refused for a wrong key (401), counted by this process since it started. */
  wrongKeys: () => number;
  /** What is kept how long (docs/reference.md#retention), one part a kind: `calls kept forever` when nothing is set. */
  retention: readonly string[];
  log: Logger;
}
