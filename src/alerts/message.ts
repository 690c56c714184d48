import { randomUUID } from 'node:crypto';
import type { IncidentRecord } from '../store/incidents.js';

/**
 * What a channel sends (docs/reference.md#alerts): an incident opened, resolved, or a test of the channel. It carries
 * no caller's personal data, only counts, hook and sink names, ids and times, so a message can go to any channel an
 * operator reads without leaking a caller to it.
 */
export type AlertKind = 'opened' | 'resolved' | 'test';

export interface Incident {
  id: string;
  /** A rule's name (`dead_delivery`, `store_outage`…), or `test`. */
  rule: string;
  /** What the incident is about (a sink's or a hook's name); null for a rule with one incident at a time. */
  key: string | null;
  /** ISO 8601. */
  opened_at: string;
  resolved_at?: string;
  /** What happened while it stayed open: `{ dead: 3 }`, `{ refused: 41 }`. */
  counts: Readonly<Record<string, number>>;
  /** One line an operator reads first, written by the rule from names and counts only. */
  summary: string;
}

export interface AlertMessage {
  kind: AlertKind;
  incident: Incident;
}

/** The one test message `callhook alerts test` sends: no incident is made, so its id is its own. */
export function testMessage(now = new Date()): AlertMessage {
  return {
    kind: 'test',
    incident: {
      id: `test-${randomUUID()}`,
      rule: 'test',
      key: null,
      opened_at: now.toISOString(),
      counts: {},
      summary: 'Test message from callhook: this alert channel works',
    },
  };
}

/** The first line of every channel's message: `Incident opened: dead_delivery (crm)`. */
export function headline({ kind, incident }: AlertMessage): string {
  if (kind === 'test') return 'callhook alert test';
  const about = incident.key === null ? incident.rule : `${incident.rule} (${incident.key})`;
  return `Incident ${kind}: ${about}`;
}

/** `dead 3, retried 1`, or undefined when nothing was counted. */
export function countsText(counts: Incident['counts']): string | undefined {
  const parts = Object.entries(counts).map(([name, n]) => `${name} ${n}`);
  return parts.length === 0 ? undefined : parts.join(', ');
}

/** How long a resolved incident lasted, as `1h 5m 3s`; undefined while it is open. */
export function durationText(incident: Incident): string | undefined {
  if (incident.resolved_at === undefined) return undefined;
  return spanText(Date.parse(incident.resolved_at) - Date.parse(incident.opened_at));
}

/** A span of milliseconds as `1d 2h 5m 3s`, to the second; `0s` for less than half of one. */
export function spanText(ms: number): string {
  const seconds = Math.round(Math.max(0, ms) / 1000);
  const parts = [
    [Math.floor(seconds / 86_400), 'd'],
    [Math.floor((seconds % 86_400) / 3600), 'h'],
    [Math.floor((seconds % 3600) / 60), 'm'],
    [seconds % 60, 's'],
  ] as const;
  const shown = parts.filter(([n]) => n > 0).map(([n, unit]) => `${n}${unit}`);
  return shown.length === 0 ? '0s' : shown.join(' ');
}

/** A kept incident as a message carries it: the same fields, in the channels' words. */
export function messageIncident(record: IncidentRecord): Incident {
  return {
    id: record.id,
    rule: record.rule,
    key: record.key,
    opened_at: record.openedAt,
    ...(record.resolvedAt === null ? {} : { resolved_at: record.resolvedAt }),
    counts: record.counts,
    summary: record.summary,
  };
}

/**
 * The dashboard's page of incidents under the config's `public_url` (docs/reference.md#alerts), or undefined when it
 * is not set: callhook cannot know the address it is reached by from outside.
 */
export function dashboardLink(publicUrl: string | undefined): string | undefined {
  return publicUrl === undefined ? undefined : `${publicUrl.replace(/\/+$/, '')}/ui/incidents`;
}

/** The message as plain lines, for the channels that send text (e-mail, the log line's text). */
export function plainText(message: AlertMessage, publicUrl: string | undefined): string {
  const { incident } = message;
  const counts = countsText(incident.counts);
  const lasted = durationText(incident);
  const link = dashboardLink(publicUrl);
  return [
    headline(message),
    '',
    incident.summary,
    '',
    `Rule: ${incident.rule}`,
    ...(incident.key === null ? [] : [`About: ${incident.key}`]),
    `Opened: ${incident.opened_at}`,
    ...(incident.resolved_at === undefined ? [] : [`Resolved: ${incident.resolved_at}`]),
    ...(lasted === undefined ? [] : [`Lasted: ${lasted}`]),
    ...(counts === undefined ? [] : [`Counts: ${counts}`]),
    `Incident: ${incident.id}`,
    ...(link === undefined ? [] : ['', `Dashboard: ${link}`]),
  ].join('\n');
}
