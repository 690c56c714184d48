import type { DeliveryState } from './outbox.js';

/**
 * What the alerts keep (docs/reference.md#alerts): incidents, one open a rule and key across every replica, and the
 * messages that tell the channels of them, an outbox of their own with leases, retries and dead letters as the
 * deliveries have. Kept in the store so a restart neither forgets an open incident nor sends its opening again.
 */

export type MessageKind = 'opened' | 'resolved';

/** An incident as kept; times ISO 8601. */
export interface IncidentRecord {
  id: string;
  rule: string;
  /** A sink's or a hook's name; null for a rule with one incident at a time. */
  key: string | null;
  openedAt: string;
  /** The last occurrence counted in it. */
  lastEventAt: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
  resolvedAt: string | null;
  /** What it counted while open: `{ dead: 3 }`. */
  counts: Record<string, number>;
  /** One line from names and counts only: never a caller's data. */
  summary: string;
}

export interface OpenIncidentInput {
  /** The new incident's id, used only when this opens one. */
  id: string;
  rule: string;
  key: string | null;
  at: string;
  counts: Readonly<Record<string, number>>;
  summary: string;
  /** A message of its opening is queued for each; none when the incident was open already. */
  channels: readonly string[];
}

/** One alert message and where it is, as the admin API shows it on its incident. */
export interface AlertMessageInfo {
  id: number;
  incidentId: string;
  channel: string;
  kind: MessageKind;
  state: DeliveryState;
  attempts: number;
  /** Epoch ms when a pending message is due. */
  nextAttemptAt: number;
  lastError: string | null;
  /** Epoch ms of the last change. */
  updatedAt: number;
}

/** A message leased to the sender, with the incident as it was when the message was queued. */
export interface ClaimedAlertMessage {
  id: number;
  channel: string;
  kind: MessageKind;
  /** 1 for the first attempt. */
  attempt: number;
  incident: IncidentRecord;
}

export interface AlertMessageResult {
  outcome: 'ok' | 'retry' | 'dead';
  error?: string;
}

export interface ListIncidentsQuery {
  state?: 'open' | 'resolved';
  rule?: string;
  limit?: number;
  /** Incidents older than this one (the list is newest first; ids are time-ordered). */
  after?: string;
}

/** The oldest held call of a hook, and how many it holds (the `held_waiting` rule). */
export interface HeldCalls {
  hook: string;
  oldestAt: string;
  count: number;
}

/** A message already sent, or not, before it could be queued (`store_outage`'s opening, sent from memory). */
export interface SentMessage {
  channel: string;
  kind: MessageKind;
  state: 'done' | 'dead';
  error: string | null;
}

export interface IncidentStore {
  /**
   * Opens an incident for its rule and key with a message of its opening queued for each channel, in one transaction,
   * unless one is open: then that one counts `counts` more and its last event is `at`. Replicas racing to open one
   * open one between them.
   */
  openIncident(input: OpenIncidentInput): Promise<{ incident: IncidentRecord; opened: boolean }>;
  /** Adds `counts` to the open incident of the rule and key, its last event `at`; false when none is open. */
  countIncident(
    rule: string,
    key: string | null,
    counts: Readonly<Record<string, number>>,
    at: string,
  ): Promise<boolean>;
  /**
   * Resolves the open incident of the rule and key, with a message of it queued for each channel; undefined when none
   * is open (another replica resolved it first).
   */
  resolveIncident(
    rule: string,
    key: string | null,
    at: string,
    channels: readonly string[],
  ): Promise<IncidentRecord | undefined>;
  /**
   * Keeps an incident made whole elsewhere, already resolved (a notice, a store outage recorded once the store is
   * back): `sent` are the messages that went before the store could keep them, `channels` get a message each of
   * `kind` queued.
   */
  recordIncident(
    incident: IncidentRecord,
    queue: { kind: MessageKind; channels: readonly string[] },
    sent?: readonly SentMessage[],
  ): Promise<void>;
  /** Marks an open incident acknowledged by `by`, once; the incident as it is after, or undefined when none has the id. */
  acknowledgeIncident(id: string, by: string, at: string): Promise<IncidentRecord | undefined>;
  getIncident(id: string): Promise<IncidentRecord | undefined>;
  /** Newest first. */
  listIncidents(query: ListIncidentsQuery): Promise<IncidentRecord[]>;
  /** The messages of these incidents, oldest first. */
  listAlertMessages(incidentIds: readonly string[]): Promise<AlertMessageInfo[]>;
  /** Leases up to `limit` due messages; an expired lease counts as due. */
  claimAlertMessages(limit: number, leaseMs: number): Promise<ClaimedAlertMessage[]>;
  /**
   * Records the attempt and moves the message on: done, back to pending at `retryAt`, or dead; only while it is still
   * in flight as this attempt (false otherwise).
   */
  finishAlertMessage(id: number, attempt: number, result: AlertMessageResult, retryAt?: number): Promise<boolean>;
  /** Milliseconds until the next message is due, or undefined when none is pending. */
  nextAlertDueIn(): Promise<number | undefined>;
  /** The held calls of each hook that holds any (a scan of the held calls, by the status index). */
  heldCalls(): Promise<HeldCalls[]>;
  /** When the hook's newest call since `since` (ISO) was received; undefined when none was. */
  lastCallSince(hook: string, since: string): Promise<string | undefined>;
  /** Whether the hook has ever stored a call. */
  hasCalls(hook: string): Promise<boolean>;
}

/** The incident an opening makes: open, unacknowledged, its first occurrence its last event. */
export function newIncident(input: OpenIncidentInput): IncidentRecord {
  const { id, rule, key, at, counts, summary } = input;
  const none = { acknowledgedAt: null, acknowledgedBy: null, resolvedAt: null };
  return { id, rule, key, openedAt: at, lastEventAt: at, ...none, counts: { ...counts }, summary };
}

/** The key of an open incident in maps: its rule and key. */
export function incidentKey(rule: string, key: string | null): string {
  return key === null ? rule : `${rule}\u0000${key}`;
}

/** Counts added up, as an open incident counts more. */
export function addCounts(
  counts: Readonly<Record<string, number>>,
  more: Readonly<Record<string, number>>,
): Record<string, number> {
  const sum = { ...counts };
  for (const [name, n] of Object.entries(more)) sum[name] = (sum[name] ?? 0) + n;
  return sum;
}
