import { newId } from '../ids.js';
import type { IncidentRecord, IncidentStore } from '../store/incidents.js';

/** The `lost_calls` notice of one reconcile run that stored calls (docs/reference.md#alerts): opened and resolved at once. */
export async function recordLostCalls(
  store: Pick<IncidentStore, 'recordIncident'>,
  channels: readonly string[],
  stored: number,
  at = new Date(),
): Promise<IncidentRecord> {
  const incident: IncidentRecord = {
    id: newId(at.getTime()),
    rule: 'lost_calls',
    key: null,
    openedAt: at.toISOString(),
    lastEventAt: at.toISOString(),
    acknowledgedAt: null,
    acknowledgedBy: null,
    resolvedAt: at.toISOString(),
    counts: { stored },
    summary: `Reconcile stored ${stored} call${stored === 1 ? '' : 's'} whose webhook never arrived`,
  };
  await store.recordIncident(incident, { kind: 'opened', channels });
  return incident;
}
