import type { AlertMessage } from '../../src/alerts/message.js';

/** An incident of the dead_delivery rule as a channel is given it: names, counts, ids and times only. */
export const OPENED: AlertMessage = {
  kind: 'opened',
  incident: {
    id: '019a1111-2222-7333-8444-555566667777',
    rule: 'dead_delivery',
    key: 'crm',
    opened_at: '2026-11-21T10:00:00.000Z',
    counts: { dead: 3 },
    summary: 'Deliveries to the sink crm have gone dead',
  },
};

export const RESOLVED: AlertMessage = {
  kind: 'resolved',
  incident: { ...OPENED.incident, resolved_at: '2026-11-21T11:05:03.000Z', counts: { dead: 4, retried: 4 } },
};
