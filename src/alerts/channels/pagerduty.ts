import { hostname } from 'node:os';
import { z } from 'zod';
import { RetryableError } from '../../sinks/errors.js';
import { sendRequest } from '../../sinks/shared/http-response.js';
import { serviceUrl } from '../../sinks/shared/service-url.js';
import { type AlertMessage, dashboardLink, headline } from '../message.js';
import { defineChannelType } from './channel.js';

const TIMEOUT_MS = 15_000;
/** Events API v2, "Send an Alert Event": `payload.summary` is at most 1024 characters. */
const SUMMARY_MAX = 1024;

/**
 * PagerDuty's Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/): `POST
 * {api_url}/v2/enqueue` with the integration's `routing_key`; `trigger` when an incident opens and `resolve` when it
 * resolves, both with `dedup_key` = the incident's id, so PagerDuty's alert opens and closes with callhook's. A 202
 * with `dedup_key` is accepted; 400 is an event PagerDuty will never take; 429 and 5xx may succeed later ("Response
 * Codes & Retry Logic"). A test triggers an `info` alert and resolves it at once, so nobody is left with one to close.
 */
export const pagerdutyChannel = defineChannelType({
  type: 'pagerduty',
  secretOptions: ['routing_key'],
  options: z.strictObject({
    routing_key: z
      .string({ error: 'routing_key is required: the integration key of an Events API v2 integration' })
      .min(1, {
        error: 'routing_key is required: the integration key of an Events API v2 integration',
      }),
    api_url: serviceUrl('api_url').default('https://events.pagerduty.com'),
  }),
  open({ routing_key, api_url }, { publicUrl }) {
    const endpoint = `${api_url.replace(/\/+$/, '')}/v2/enqueue`;
    const source = publicUrl === undefined ? hostname() : new URL(publicUrl).host;
    const enqueue = async (event: Record<string, unknown>, signal: AbortSignal) => {
      const body = JSON.stringify({ routing_key, ...event });
      const headers = { 'content-type': 'application/json', 'user-agent': 'callhook' };
      const response = await sendRequest(
        endpoint,
        { method: 'POST', headers, body },
        { signal, timeoutMs: TIMEOUT_MS },
      );
      const reply = (await response.json().catch(() => undefined)) as { dedup_key?: unknown } | undefined;
      if (typeof reply?.dedup_key !== 'string')
        throw new RetryableError(
          `PagerDuty answered HTTP ${response.status} without a dedup_key: not an Events API v2 reply`,
        );
    };
    return {
      async send(message, { signal }) {
        const dedup_key = message.incident.id;
        if (message.kind !== 'resolved') {
          await enqueue({ event_action: 'trigger', dedup_key, ...details(message, source, publicUrl) }, signal);
        }
        // A test resolves what it triggered; so does a notice (an incident that opened and resolved at once, lost_calls).
        if (message.kind !== 'opened' || message.incident.resolved_at !== undefined)
          await enqueue({ event_action: 'resolve', dedup_key }, signal);
      },
    };
  },
});

/** The `payload` of a trigger (PagerDuty Common Event Format) and a link to the dashboard when there is one. */
function details(message: AlertMessage, source: string, publicUrl: string | undefined): Record<string, unknown> {
  const { incident } = message;
  const link = dashboardLink(publicUrl);
  const summary = `${headline(message)}: ${incident.summary}`;
  return {
    payload: {
      summary: summary.length > SUMMARY_MAX ? `${summary.slice(0, SUMMARY_MAX - 1)}…` : summary,
      source,
      severity: message.kind === 'test' ? 'info' : 'error',
      timestamp: incident.opened_at,
      component: incident.key ?? undefined,
      class: incident.rule,
      custom_details: { incident: incident.id, rule: incident.rule, key: incident.key, counts: incident.counts },
    },
    client: 'callhook',
    ...(link === undefined ? {} : { client_url: link, links: [{ href: link, text: 'callhook dashboard' }] }),
  };
}
