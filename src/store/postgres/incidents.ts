import type pg from 'pg';
import {
  type AlertMessageInfo,
  addCounts,
  type ClaimedAlertMessage,
  type IncidentRecord,
  type IncidentStore,
  type MessageKind,
  newIncident,
} from '../incidents.js';
import { inTransaction, pgText } from './client.js';

/**
 * The PostgreSQL store's incidents and alert messages (store/incidents.ts). Replicas that see the same occurrence at
 * once meet on the partial unique index of open incidents: one INSERT wins, the others count in the incident it made.
 */

interface IncidentRow {
  id: string;
  rule: string;
  key: string | null;
  opened_at: Date;
  last_event_at: Date;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  resolved_at: Date | null;
  counts: Record<string, number>;
  summary: string;
}

function incidentOf(row: IncidentRow): IncidentRecord {
  return {
    id: row.id,
    rule: row.rule,
    key: row.key,
    openedAt: row.opened_at.toISOString(),
    lastEventAt: row.last_event_at.toISOString(),
    acknowledgedAt: row.acknowledged_at?.toISOString() ?? null,
    acknowledgedBy: row.acknowledged_by,
    resolvedAt: row.resolved_at?.toISOString() ?? null,
    counts: row.counts,
    summary: row.summary,
  };
}

const OPEN = `SELECT * FROM incidents WHERE rule = $1 AND coalesce(key, '') = coalesce($2, '') AND resolved_at IS NULL`;
const INSERT = `INSERT INTO incidents (id, rule, key, opened_at, last_event_at, acknowledged_at, acknowledged_by,
  resolved_at, counts, summary) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;
const QUEUE = `INSERT INTO alert_messages (incident_id, channel, kind, incident, state, attempts, next_attempt_at,
  last_error, updated_at) SELECT $1, unnest($2::text[]), $3, $4, $5, $6, $7, $8, $7`;
const MESSAGE_COLUMNS = `SELECT id, incident_id AS "incidentId", channel, kind, state, attempts,
  next_attempt_at AS "nextAttemptAt", last_error AS "lastError", updated_at AS "updatedAt" FROM alert_messages`;

const insertParams = (incident: IncidentRecord) => [
  incident.id,
  incident.rule,
  pgText(incident.key ?? undefined),
  incident.openedAt,
  incident.lastEventAt,
  incident.acknowledgedAt,
  incident.acknowledgedBy,
  incident.resolvedAt,
  JSON.stringify(incident.counts),
  pgText(incident.summary),
];

export function postgresIncidents(pool: pg.Pool): IncidentStore {
  const queue = (
    client: pg.ClientBase,
    incident: IncidentRecord,
    kind: MessageKind,
    channels: readonly string[],
    state: 'pending' | 'done' | 'dead' = 'pending',
    error: string | null = null,
  ) =>
    channels.length === 0
      ? undefined
      : client.query(QUEUE, [
          incident.id,
          channels,
          kind,
          JSON.stringify(incident),
          state,
          state === 'pending' ? 0 : 1,
          Date.now(),
          pgText(error ?? undefined),
        ]);

  const countOpen = async (
    client: pg.ClientBase,
    rule: string,
    key: string | null,
    counts: Readonly<Record<string, number>>,
    at: string,
  ): Promise<IncidentRecord | undefined> => {
    const { rows } = await client.query<IncidentRow>(`${OPEN} FOR UPDATE`, [rule, key]);
    const open = rows[0];
    if (!open) return undefined;
    const { rows: updated } = await client.query<IncidentRow>(
      'UPDATE incidents SET counts = $1, last_event_at = greatest(last_event_at, $2) WHERE id = $3 RETURNING *',
      [JSON.stringify(addCounts(open.counts, counts)), at, open.id],
    );
    return incidentOf(updated[0]!);
  };

  return {
    openIncident: (input) =>
      inTransaction(pool, async (client) => {
        const counted = await countOpen(client, input.rule, input.key, input.counts, input.at);
        if (counted) return { incident: counted, opened: false };
        const incident = newIncident(input);
        const inserted = await client.query(
          `${INSERT} ON CONFLICT (rule, coalesce(key, '')) WHERE resolved_at IS NULL DO NOTHING`,
          insertParams(incident),
        );
        if (inserted.rowCount === 1) {
          await queue(client, incident, 'opened', input.channels);
          return { incident, opened: true };
        }
        // Another replica opened it since our look, and has committed: count in its incident.
        const theirs = await countOpen(client, input.rule, input.key, input.counts, input.at);
        if (!theirs) throw new Error('store: an incident was opened and resolved during an opening');
        return { incident: theirs, opened: false };
      }),
    countIncident: (rule, key, counts, at) =>
      inTransaction(pool, async (client) => (await countOpen(client, rule, key, counts, at)) !== undefined),
    resolveIncident: (rule, key, at, channels) =>
      inTransaction(pool, async (client) => {
        const { rows } = await client.query<IncidentRow>(
          `UPDATE incidents SET resolved_at = $3 WHERE id = (${OPEN.replace('SELECT *', 'SELECT id')} FOR UPDATE)
           AND resolved_at IS NULL RETURNING *`,
          [rule, key, at],
        );
        if (!rows[0]) return undefined;
        const incident = incidentOf(rows[0]);
        await queue(client, incident, 'resolved', channels);
        return incident;
      }),
    recordIncident: (incident, { kind, channels }, sent = []) =>
      inTransaction(pool, async (client) => {
        await client.query(INSERT, insertParams(incident));
        for (const message of sent)
          await queue(client, incident, message.kind, [message.channel], message.state, message.error);
        await queue(client, incident, kind, channels);
      }),
    acknowledgeIncident: async (id, by, at) => {
      await pool.query(
        `UPDATE incidents SET acknowledged_at = $2, acknowledged_by = $3
         WHERE id = $1 AND resolved_at IS NULL AND acknowledged_at IS NULL`,
        [pgText(id), at, pgText(by)],
      );
      const { rows } = await pool.query<IncidentRow>('SELECT * FROM incidents WHERE id = $1', [pgText(id)]);
      return rows[0] && incidentOf(rows[0]);
    },
    getIncident: async (id) => {
      const { rows } = await pool.query<IncidentRow>('SELECT * FROM incidents WHERE id = $1', [pgText(id)]);
      return rows[0] && incidentOf(rows[0]);
    },
    listIncidents: async ({ state, rule, limit = 50, after }) => {
      const { rows } = await pool.query<IncidentRow>(
        `SELECT * FROM incidents
         WHERE ($1::text IS NULL OR ($1 = 'open') = (resolved_at IS NULL))
           AND ($2::text IS NULL OR rule = $2) AND ($3::text IS NULL OR id < $3)
         ORDER BY id DESC LIMIT $4`,
        [state ?? null, pgText(rule), pgText(after), limit],
      );
      return rows.map(incidentOf);
    },
    listAlertMessages: async (ids) => {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<AlertMessageInfo>(
        `${MESSAGE_COLUMNS} WHERE incident_id = ANY($1::text[]) ORDER BY id`,
        [ids],
      );
      return rows;
    },
    claimAlertMessages: async (limit, leaseMs) => {
      const now = Date.now();
      const { rows } = await pool.query<{
        id: number;
        channel: string;
        kind: MessageKind;
        attempts: number;
        incident: IncidentRecord;
      }>(
        `UPDATE alert_messages SET state = 'in_flight', attempts = attempts + 1, lease_until = $2, updated_at = $1
         WHERE id IN (SELECT id FROM alert_messages
           WHERE (state = 'pending' AND next_attempt_at <= $1) OR (state = 'in_flight' AND lease_until <= $1)
           ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING id, channel, kind, attempts, incident`,
        [now, now + leaseMs, limit],
      );
      return rows
        .sort((a, b) => a.id - b.id)
        .map(
          (row): ClaimedAlertMessage => ({
            id: row.id,
            channel: row.channel,
            kind: row.kind,
            attempt: row.attempts,
            incident: row.incident,
          }),
        );
    },
    finishAlertMessage: async (id, attempt, { outcome, error }, retryAt) => {
      const state = outcome === 'ok' ? 'done' : outcome === 'retry' ? 'pending' : 'dead';
      const { rowCount } = await pool.query(
        `UPDATE alert_messages SET state = $3, next_attempt_at = coalesce($4, next_attempt_at), lease_until = NULL,
           last_error = coalesce($5, last_error), updated_at = $6
         WHERE id = $1 AND state = 'in_flight' AND attempts = $2`,
        [id, attempt, state, retryAt ?? null, pgText(error), Date.now()],
      );
      return rowCount === 1;
    },
    nextAlertDueIn: async () => {
      const { rows } = await pool.query<{ at: number | null }>(
        `SELECT min(CASE WHEN state = 'pending' THEN next_attempt_at ELSE lease_until END) AS at
         FROM alert_messages WHERE state IN ('pending', 'in_flight')`,
      );
      const at = rows[0]?.at;
      return at == null ? undefined : Math.max(0, at - Date.now());
    },
    heldCalls: async () => {
      const { rows } = await pool.query<{ hook: string; oldestAt: Date; count: number }>(
        `SELECT hook, min(received_at) AS "oldestAt", count(*)::int AS count FROM calls WHERE status = 'held'
         GROUP BY hook ORDER BY hook COLLATE "C"`,
      );
      return rows.map((row) => ({ ...row, oldestAt: row.oldestAt.toISOString() }));
    },
    lastCallSince: async (hook, since) => {
      const { rows } = await pool.query<{ at: Date | null }>(
        'SELECT max(received_at) AS at FROM calls WHERE received_at >= $1 AND hook = $2',
        [since, hook],
      );
      return rows[0]?.at?.toISOString();
    },
    hasCalls: async (hook) => (await pool.query('SELECT 1 FROM calls WHERE hook = $1 LIMIT 1', [hook])).rowCount === 1,
  };
}
