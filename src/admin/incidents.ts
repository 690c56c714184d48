import { CallhookError } from '../errors.js';
import { pageLimit } from '../store/admin-query.js';
import type { AlertMessageInfo, IncidentRecord, IncidentStore, ListIncidentsQuery } from '../store/incidents.js';

/**
 * The incidents as an operator sees and acknowledges them (docs/reference.md#alerts): `GET /admin/incidents`, `POST
 * /admin/incidents/<id>/ack`, `callhook incidents list|ack` through them, the dashboard's banner and `/ui/incidents`.
 * An incident carries no caller's data (alerts/message.ts), so it is shown as kept.
 */

/** One message of an incident and where it is: an alert that went dead is shown here, and raises nothing. */
export interface AlertMessageView {
  channel: string;
  kind: AlertMessageInfo['kind'];
  state: AlertMessageInfo['state'];
  attempts: number;
  last_error: string | null;
  updated_at: string;
}

/** One incident in the admin API's words; times ISO 8601, null when there is none. */
export interface IncidentView {
  id: string;
  rule: string;
  key: string | null;
  state: 'open' | 'resolved';
  summary: string;
  opened_at: string;
  /** The last occurrence counted in it. */
  last_event: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  resolved_at: string | null;
  counts: Record<string, number>;
  messages: AlertMessageView[];
}

export interface IncidentPage {
  incidents: IncidentView[];
  /** The `after` of the next page; null on the last. */
  next: string | null;
}

export interface IncidentOperations {
  list(query: ListIncidentsQuery): Promise<IncidentPage>;
  /** Every open incident, newest first: the banner on every page, and /metrics. */
  open(): Promise<IncidentView[]>;
  get(id: string): Promise<IncidentView>;
  /** Acknowledged by `by` (kept with it); 404 when there is no such incident, 409 when it is resolved already. */
  acknowledge(id: string, by: string): Promise<IncidentView>;
}

/** More open incidents than this at once is a config gone wrong, not a page to read: the banner counts them. */
const OPEN_MAX = 500;

export function incidentOperations({
  store,
}: {
  store: Pick<IncidentStore, 'listIncidents' | 'listAlertMessages' | 'getIncident' | 'acknowledgeIncident'>;
}): IncidentOperations {
  const views = async (incidents: IncidentRecord[]): Promise<IncidentView[]> => {
    const messages = await store.listAlertMessages(incidents.map((i) => i.id));
    return incidents.map((incident) =>
      incidentView(
        incident,
        messages.filter((m) => m.incidentId === incident.id),
      ),
    );
  };
  const get = async (id: string): Promise<IncidentView> => {
    const incident = await store.getIncident(id);
    if (!incident) throw new CallhookError('NOT_FOUND', `no incident ${id}`);
    return (await views([incident]))[0]!;
  };
  return {
    async list(query) {
      const limit = pageLimit(query.limit);
      const incidents = await store.listIncidents({ ...query, limit: limit + 1 });
      const page = incidents.slice(0, limit);
      return { incidents: await views(page), next: incidents.length > limit ? page.at(-1)!.id : null };
    },
    open: async () => views(await store.listIncidents({ state: 'open', limit: OPEN_MAX })),
    get,
    async acknowledge(id, by) {
      const incident = await store.acknowledgeIncident(id, by, new Date().toISOString());
      if (!incident) throw new CallhookError('NOT_FOUND', `no incident ${id}`);
      if (incident.resolvedAt !== null && incident.acknowledgedAt === null)
        throw new CallhookError('CONFLICT', `incident ${id} is resolved already: there is nothing to acknowledge`);
      return get(id);
    },
  };
}

export function incidentView(incident: IncidentRecord, messages: readonly AlertMessageInfo[]): IncidentView {
  return {
    id: incident.id,
    rule: incident.rule,
    key: incident.key,
    state: incident.resolvedAt === null ? 'open' : 'resolved',
    summary: incident.summary,
    opened_at: incident.openedAt,
    last_event: incident.lastEventAt,
    acknowledged_at: incident.acknowledgedAt,
    acknowledged_by: incident.acknowledgedBy,
    resolved_at: incident.resolvedAt,
    counts: incident.counts,
    messages: messages.map((m) => ({
      channel: m.channel,
      kind: m.kind,
      state: m.state,
      attempts: m.attempts,
      last_error: m.lastError,
      updated_at: new Date(m.updatedAt).toISOString(),
    })),
  };
}
