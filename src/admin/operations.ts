import pino, { type Logger } from 'pino';
import type { Intake } from '../intake/intake.js';
import { type AuditLog, createAuditLog } from '../operators/audit.js';
import { type PrivacyOperations, privacyOperations } from '../privacy/requests.js';
import type { Sink } from '../sinks/sink.js';
import type { AdminQueries } from '../store/admin-queries.js';
import type { IncidentStore } from '../store/incidents.js';
import type { OperatorStore } from '../store/operators.js';
import type { PrivacyStore } from '../store/privacy.js';
import { createClock } from '../web/time.js';
import { type AuditReader, auditReader } from './audit-log.js';
import { type CallOperations, callOperations } from './calls.js';
import { type DeliveryOperations, deliveryOperations } from './deliveries.js';
import { type IncidentOperations, incidentOperations } from './incidents.js';
import { createJobs, type JobView } from './jobs.js';
import { type RedeliveryOperations, redeliveryOperations } from './period-redelivery.js';
import { type ReceiptOperations, receiptOperations } from './receipts.js';
import { type ConfiguredSink, type SinkOperations, sinkOperations } from './sinks.js';
import { type UserOperations, userOperations } from './users.js';

/**
 * The operator's operations on calls, deliveries, refused requests and sinks, built once by `serve` (main.ts) and
 * shared by the admin API and the dashboard, so both act through the very same objects: one rule, written once.
 */
export interface AdminOperations {
  calls: CallOperations;
  deliveries: DeliveryOperations;
  receipts: ReceiptOperations;
  sinks: SinkOperations;
  /** The alerts' incidents, listed and acknowledged (docs/reference.md#alerts). */
  incidents: IncidentOperations;
  /** A person's data shown and erased (docs/reference.md#access, #erasure). */
  privacy: PrivacyOperations;
  /** A period's calls sent to one sink, in the background, and the jobs that do it (period-redelivery.ts). */
  redeliveries: RedeliveryOperations;
  /** The people who run callhook, managed by an admin (docs/reference.md#operators). */
  users: UserOperations;
  /**
   * The audit log (docs/reference.md#audit-log): read a page at a time, and appended to by each change (the user
   * operations here, the others through admin/audited.ts) and each sign-in.
   */
  audit: AuditLog & AuditReader;
  /** Every configured sink's name, the ones a redelivery or a retry may name. */
  sinkNames: readonly string[];
  /** The sinks that take test traffic (docs/reference.md#test-traffic): the ones a test call may be redelivered to. */
  testSinks: readonly string[];
}

export interface AdminOperationsDeps {
  store: AdminQueries & IncidentStore & PrivacyStore & OperatorStore;
  /** A refused request is ingested again through the webhook route's own intake. */
  intake: Pick<Intake, 'hooks' | 'ingestRequest'>;
  /** The configured sinks with their types and configured `paused`. */
  sinks: readonly ConfiguredSink[];
  /** Wakes the delivery worker after something became due. */
  notify: () => void;
  /** What a refused request ingested again may weigh, as at intake. */
  bodyLimitBytes: number;
  /** A phone filter is read as intake reads a number, in this region when it has no country code. */
  phoneRegion?: string;
  /** The config's `timezone` (the server's by default): a date given for a period is a day there. */
  timezone?: string;
  /** Told when a background job ends, for the log. */
  onJobEnd?: (job: JobView) => void;
  /** The running sinks, for an erasure to reach their copies; none in a process that delivers nothing. */
  openSinks?: ReadonlyMap<string, Pick<Sink, 'erase'>>;
  log?: Logger;
  /** Takes the secrets out of a kept body before it is shown. */
  maskBody?: (bytes: Uint8Array) => Uint8Array;
  /**
   * Whether the config sets an admin token (CALLHOOK_ADMIN_TOKEN or `admin_token`): then the last admin user may be
   * removed or demoted, the token standing in (docs/reference.md#operators). One callhook generated does not count.
   */
  adminTokenConfigured?: boolean;
}

/** A process with no log of its own (a test, a command) logs nothing of its erasures. */
const silentLog = pino({ level: 'silent' });

export function adminOperations({
  store,
  intake,
  sinks,
  notify,
  bodyLimitBytes,
  phoneRegion,
  timezone = Intl.DateTimeFormat().resolvedOptions().timeZone,
  onJobEnd,
  openSinks = new Map(),
  log = silentLog,
  maskBody,
  adminTokenConfigured = false,
}: AdminOperationsDeps): AdminOperations {
  const { hooks } = intake;
  const sinkNames = sinks.map((sink) => sink.name);
  const testSinks = sinks.filter((sink) => sink.testTraffic === true).map((sink) => sink.name);
  const jobs = createJobs({ onEnd: onJobEnd });
  const audit = { ...createAuditLog({ store, log }), ...auditReader({ store }) };
  return {
    calls: callOperations({ store, hooks, sinkNames, testSinks, notify, phoneRegion }),
    deliveries: deliveryOperations({ store, notify, sinkNames }),
    receipts: receiptOperations({ store, hooks, ingest: intake.ingestRequest, bodyLimitBytes }),
    sinks: sinkOperations({ store, sinks, notify }),
    incidents: incidentOperations({ store }),
    privacy: privacyOperations({
      store,
      sinks: new Map(
        sinks.flatMap((s) => {
          const sink = openSinks.get(s.name);
          return sink ? [[s.name, { type: s.type, sink }] as const] : [];
        }),
      ),
      log,
      maskBody,
      phoneRegion,
    }),
    redeliveries: redeliveryOperations({ store, hooks, sinkNames, notify, clock: createClock(timezone), jobs }),
    users: userOperations({ store, audit, adminTokenConfigured }),
    audit,
    sinkNames,
    testSinks,
  };
}
