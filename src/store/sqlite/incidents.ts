import type Database from 'better-sqlite3';
import {
  type AlertMessageInfo,
  addCounts,
  type ClaimedAlertMessage,
  type IncidentRecord,
  type IncidentStore,
  type MessageKind,
  newIncident,
} from '../incidents.js';
import type { SqliteReader } from './reader.js';

/**
 * The SQLite store's incidents and alert messages (store/incidents.ts). Few and small, written in place on the event
 * loop's connection as the admin's edits are; the one open incident a rule and key is the partial unique index's.
 */

type Db = Database.Database;

interface IncidentRow {
  id: string;
  rule: string;
  key: string | null;
  opened_at: string;
  last_event_at: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  resolved_at: string | null;
  counts: string;
  summary: string;
}

export function incidentOf(row: IncidentRow): IncidentRecord {
  return {
    id: row.id,
    rule: row.rule,
    key: row.key,
    openedAt: row.opened_at,
    lastEventAt: row.last_event_at,
    acknowledgedAt: row.acknowledged_at,
    acknowledgedBy: row.acknowledged_by,
    resolvedAt: row.resolved_at,
    counts: JSON.parse(row.counts) as Record<string, number>,
    summary: row.summary,
  };
}

const MESSAGE_COLUMNS = `SELECT id, incident_id AS incidentId, channel, kind, state, attempts,
  next_attempt_at AS nextAttemptAt, last_error AS lastError, updated_at AS updatedAt FROM alert_messages`;

export function sqliteIncidents(db: Db, reader: SqliteReader): IncidentStore {
  const stmts = {
    open: db.prepare(
      `SELECT * FROM incidents WHERE rule = ? AND coalesce(key, '') = coalesce(?, '') AND resolved_at IS NULL`,
    ),
    get: db.prepare('SELECT * FROM incidents WHERE id = ?'),
    insert:
      db.prepare(`INSERT INTO incidents (id, rule, key, opened_at, last_event_at, acknowledged_at, acknowledged_by,
      resolved_at, counts, summary) VALUES (@id, @rule, @key, @openedAt, @lastEventAt, @acknowledgedAt, @acknowledgedBy,
      @resolvedAt, @counts, @summary)`),
    count: db.prepare('UPDATE incidents SET counts = ?, last_event_at = max(last_event_at, ?) WHERE id = ?'),
    resolve: db.prepare('UPDATE incidents SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL'),
    ack: db.prepare(`UPDATE incidents SET acknowledged_at = ?, acknowledged_by = ?
      WHERE id = ? AND resolved_at IS NULL AND acknowledged_at IS NULL`),
    queue:
      db.prepare(`INSERT INTO alert_messages (incident_id, channel, kind, incident, state, attempts, next_attempt_at,
      last_error, updated_at) VALUES (@incidentId, @channel, @kind, @incident, @state, @attempts, @now, @error, @now)`),
    due: db
      .prepare(`SELECT id FROM alert_messages WHERE (state = 'pending' AND next_attempt_at <= @now)
      OR (state = 'in_flight' AND lease_until <= @now) ORDER BY id LIMIT @limit`)
      .pluck(),
    lease: db.prepare(`UPDATE alert_messages SET state = 'in_flight', attempts = attempts + 1, lease_until = @until,
      updated_at = @now WHERE id = @id RETURNING id, channel, kind, attempts, incident`),
    finish: db.prepare(`UPDATE alert_messages SET state = @state, next_attempt_at = coalesce(@retryAt, next_attempt_at),
      lease_until = NULL, last_error = coalesce(@error, last_error), updated_at = @now
      WHERE id = @id AND state = 'in_flight' AND attempts = @attempt`),
    nextDue: db
      .prepare(`SELECT MIN(at) FROM (
      SELECT MIN(next_attempt_at) AS at FROM alert_messages WHERE state = 'pending'
      UNION ALL SELECT MIN(lease_until) FROM alert_messages WHERE state = 'in_flight')`)
      .pluck(),
    hasCalls: db.prepare('SELECT 1 FROM calls WHERE hook = ? LIMIT 1').pluck(),
  };

  const openRow = (rule: string, key: string | null) => stmts.open.get(rule, key) as IncidentRow | undefined;
  const queue = (incident: IncidentRecord, kind: MessageKind, channels: readonly string[], now = Date.now()) => {
    const json = JSON.stringify(incident);
    for (const channel of channels)
      stmts.queue.run({
        incidentId: incident.id,
        channel,
        kind,
        incident: json,
        state: 'pending',
        attempts: 0,
        now,
        error: null,
      });
  };

  return {
    openIncident: async (input) =>
      db
        .transaction(() => {
          const open = openRow(input.rule, input.key);
          if (open) {
            const counts = addCounts(JSON.parse(open.counts) as Record<string, number>, input.counts);
            stmts.count.run(JSON.stringify(counts), input.at, open.id);
            return { incident: incidentOf(openRow(input.rule, input.key)!), opened: false };
          }
          const incident = newIncident(input);
          stmts.insert.run({ ...incident, counts: JSON.stringify(incident.counts) });
          queue(incident, 'opened', input.channels);
          return { incident, opened: true };
        })
        .immediate(),
    countIncident: async (rule, key, counts, at) =>
      db
        .transaction(() => {
          const open = openRow(rule, key);
          if (!open) return false;
          stmts.count.run(JSON.stringify(addCounts(JSON.parse(open.counts), counts)), at, open.id);
          return true;
        })
        .immediate(),
    resolveIncident: async (rule, key, at, channels) =>
      db
        .transaction(() => {
          const open = openRow(rule, key);
          if (!open) return undefined;
          stmts.resolve.run(at, open.id);
          const incident = incidentOf({ ...open, resolved_at: at });
          queue(incident, 'resolved', channels);
          return incident;
        })
        .immediate(),
    recordIncident: async (incident, { kind, channels }, sent = []) =>
      db
        .transaction(() => {
          stmts.insert.run({ ...incident, counts: JSON.stringify(incident.counts) });
          const now = Date.now();
          const json = JSON.stringify(incident);
          for (const { channel, kind: sentKind, state, error } of sent)
            stmts.queue.run({
              incidentId: incident.id,
              channel,
              kind: sentKind,
              incident: json,
              state,
              attempts: 1,
              now,
              error,
            });
          queue(incident, kind, channels, now);
        })
        .immediate(),
    acknowledgeIncident: async (id, by, at) => {
      stmts.ack.run(at, by, id);
      const row = stmts.get.get(id) as IncidentRow | undefined;
      return row && incidentOf(row);
    },
    getIncident: async (id) => {
      const row = stmts.get.get(id) as IncidentRow | undefined;
      return row && incidentOf(row);
    },
    listIncidents: async ({ state, rule, limit = 50, after }) => {
      const where = [
        state === 'open' ? 'resolved_at IS NULL' : state === 'resolved' ? 'resolved_at IS NOT NULL' : undefined,
        rule === undefined ? undefined : 'rule = @rule',
        after === undefined ? undefined : 'id < @after',
      ].filter((term) => term !== undefined);
      // The open ones are few, one a rule and key: `+id` has SQLite find them by the partial index that keeps them so
      // and sort them, where it would walk every incident ever kept down the primary key (each /metrics scrape asks).
      const order = state === 'open' ? '+id' : 'id';
      const sql = `SELECT * FROM incidents ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} DESC LIMIT @limit`;
      return (db.prepare(sql).all({ rule, after, limit }) as IncidentRow[]).map(incidentOf);
    },
    listAlertMessages: async (ids) => {
      if (ids.length === 0) return [];
      const marks = ids.map(() => '?').join(', ');
      return db
        .prepare(`${MESSAGE_COLUMNS} WHERE incident_id IN (${marks}) ORDER BY id`)
        .all(...ids) as AlertMessageInfo[];
    },
    claimAlertMessages: async (limit, leaseMs) =>
      db
        .transaction(() => {
          const now = Date.now();
          const ids = stmts.due.all({ now, limit }) as number[];
          return ids.map((id) => {
            const row = stmts.lease.get({ id, now, until: now + leaseMs }) as {
              id: number;
              channel: string;
              kind: MessageKind;
              attempts: number;
              incident: string;
            };
            return {
              id: row.id,
              channel: row.channel,
              kind: row.kind,
              attempt: row.attempts,
              incident: JSON.parse(row.incident) as IncidentRecord,
            } satisfies ClaimedAlertMessage;
          });
        })
        .immediate(),
    finishAlertMessage: async (id, attempt, { outcome, error }, retryAt) => {
      const state = outcome === 'ok' ? 'done' : outcome === 'retry' ? 'pending' : 'dead';
      const now = Date.now();
      return stmts.finish.run({ id, attempt, state, retryAt: retryAt ?? null, error: error ?? null, now }).changes > 0;
    },
    nextAlertDueIn: async () => {
      const at = stmts.nextDue.get() as number | null;
      return at == null ? undefined : Math.max(0, at - Date.now());
    },
    heldCalls: () =>
      reader.all(`SELECT hook, MIN(received_at) AS oldestAt, COUNT(*) AS count FROM calls WHERE status = 'held'
        GROUP BY hook ORDER BY hook`),
    lastCallSince: async (hook, since) => {
      const [row] = await reader.all<{ at: string | null }>(
        'SELECT MAX(received_at) AS at FROM calls WHERE received_at >= @since AND hook = @hook',
        { hook, since },
      );
      return row?.at ?? undefined;
    },
    hasCalls: async (hook) => stmts.hasCalls.get(hook) !== undefined,
  };
}
