import { startReceiver } from '../helpers/receiver.js';

/**
 * A local stand-in for PagerDuty's Events API v2, for tests only: `POST /v2/enqueue` checked as PagerDuty documents it
 * (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/): a JSON body with the integration's
 * `routing_key`, `event_action` trigger, acknowledge or resolve, a `dedup_key` of at most 255 characters (required to
 * acknowledge or resolve), and on a trigger a `payload` with `summary` (at most 1024), `source` and a `severity` of
 * critical, error, warning or info. Answered in its shapes ("Response Codes & Retry Logic"): 202 `{status, message,
 * dedup_key}`, 400 `{status: "invalid event", message, errors}`, and, when told, 429 (with `Retry-After`) or a 5xx.
 * Its alerts are kept by dedup_key, open or resolved.
 */

export interface PagerDutyEvent {
  routing_key: string;
  event_action: string;
  dedup_key?: string;
  payload?: { summary: string; source: string; severity: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface FakePagerDuty {
  /** The base URL, as the channel's `api_url`. */
  url: string;
  routingKey: string;
  /** Every event accepted, in order. */
  events: PagerDutyEvent[];
  /** Alerts by dedup_key: `triggered` until a resolve. */
  alerts: Map<string, 'triggered' | 'resolved'>;
  /** The next `times` requests get this status instead of being processed. */
  fail(status: 429 | 500 | 502 | 503, options?: { times?: number; retryAfter?: string }): void;
  close(): Promise<void>;
}

const SEVERITIES = new Set(['critical', 'error', 'warning', 'info']);

export async function startFakePagerDuty(routingKey = 'R0123456789abcdef0123456789abcd'): Promise<FakePagerDuty> {
  const events: PagerDutyEvent[] = [];
  const alerts = new Map<string, 'triggered' | 'resolved'>();
  let failures: { status: number; retryAfter: string | undefined; left: number } | undefined;
  const receiver = await startReceiver((req, res) => {
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    const invalid = (...errors: string[]) =>
      json(400, { status: 'invalid event', message: 'Event object is invalid', errors });
    if (req.method !== 'POST' || req.url !== '/v2/enqueue') return json(404, { status: 'not found' });
    if (failures && failures.left > 0) {
      failures.left -= 1;
      if (failures.status === 429)
        return json(
          429,
          {
            status: 'throttle event',
            message: 'Requests for this service are arriving too quickly.  Please retry later.',
          },
          failures.retryAfter === undefined ? {} : { 'retry-after': failures.retryAfter },
        );
      return json(failures.status, { status: 'error', message: 'Internal Server Error' });
    }
    let event: PagerDutyEvent;
    try {
      event = JSON.parse(req.body) as PagerDutyEvent;
    } catch {
      return invalid('Event object is not valid JSON');
    }
    if (event.routing_key !== routingKey) return invalid('Invalid routing key');
    if (!['trigger', 'acknowledge', 'resolve'].includes(event.event_action))
      return invalid("'event_action' is invalid (must be one of: trigger, acknowledge, resolve)");
    if (event.dedup_key !== undefined && (typeof event.dedup_key !== 'string' || event.dedup_key.length > 255))
      return invalid("'dedup_key' must be a string of at most 255 characters");
    if (event.event_action === 'trigger') {
      const p = event.payload;
      const problems = [
        typeof p?.summary !== 'string' || p.summary === '' ? "'payload.summary' is missing or blank" : '',
        typeof p?.summary === 'string' && p.summary.length > 1024 ? "'payload.summary' is longer than 1024" : '',
        typeof p?.source !== 'string' || p.source === '' ? "'payload.source' is missing or blank" : '',
        !SEVERITIES.has(String(p?.severity)) ? "'payload.severity' must be one of critical, error, warning, info" : '',
      ].filter(Boolean);
      if (problems.length > 0) return invalid(...problems);
    } else if (event.dedup_key === undefined) return invalid("'dedup_key' is required to acknowledge or resolve");
    const dedupKey = event.dedup_key ?? crypto.randomUUID();
    events.push(event);
    if (event.event_action === 'trigger') alerts.set(dedupKey, 'triggered');
    // A resolve of an alert that is not open is dropped, and still accepted.
    if (event.event_action === 'resolve' && alerts.get(dedupKey) === 'triggered') alerts.set(dedupKey, 'resolved');
    return json(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey });
  });
  return {
    url: receiver.url,
    routingKey,
    events,
    alerts,
    fail(status, { times = 1, retryAfter } = {}) {
      failures = { status, retryAfter, left: times };
    },
    close: () => receiver.close(),
  };
}
