import { z } from 'zod';
import { sendRequest } from '../../sinks/shared/http-response.js';
import { webhookUrl } from '../../sinks/slack/slack.js';
import { type AlertMessage, countsText, dashboardLink, durationText, headline } from '../message.js';
import { defineChannelType } from './channel.js';

const TIMEOUT_MS = 15_000;
const EMOJI = { opened: ':rotating_light:', resolved: ':white_check_mark:', test: ':wave:' } as const;

/**
 * A Slack message through an incoming webhook, with the slack sink's `webhook_url` (docs/reference.md#alerts). Slack
 * answers 200 `ok`, or a status with a plain-text code (`invalid_payload`, `no_service`; 429 with `Retry-After`),
 * which sendRequest maps as it does for the sink.
 */
export const slackChannel = defineChannelType({
  type: 'slack',
  secretOptions: ['webhook_url'],
  options: z.strictObject({ webhook_url: webhookUrl }),
  open({ webhook_url: url }, { publicUrl }) {
    return {
      async send(message, { signal }) {
        const body = JSON.stringify(slackAlert(message, publicUrl));
        const headers = { 'content-type': 'application/json', 'user-agent': 'callhook' };
        const response = await sendRequest(url, { method: 'POST', headers, body }, { signal, timeoutMs: TIMEOUT_MS });
        await response.body?.cancel();
      },
    };
  },
});

/** The `text` fallback (notifications) and the Block Kit layout of one message. */
export function slackAlert(message: AlertMessage, publicUrl: string | undefined): { text: string; blocks: unknown[] } {
  const { incident } = message;
  const title = `${EMOJI[message.kind]} ${headline(message)}`;
  const counts = countsText(incident.counts);
  const lasted = durationText(incident);
  const link = dashboardLink(publicUrl);
  const field = (label: string, value: string) => ({ type: 'mrkdwn', text: `*${label}*\n${mrkdwn(value)}` });
  const fields = [
    field('Rule', incident.rule),
    ...(incident.key === null ? [] : [field('About', incident.key)]),
    field('Opened', incident.opened_at),
    ...(incident.resolved_at === undefined ? [] : [field('Resolved', incident.resolved_at)]),
    ...(lasted === undefined ? [] : [field('Lasted', lasted)]),
    ...(counts === undefined ? [] : [field('Counts', counts)]),
  ];
  const blocks: unknown[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${mrkdwn(title)}*\n${mrkdwn(incident.summary)}` } },
    { type: 'section', fields },
  ];
  if (link !== undefined)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `<${linkTarget(link)}|Open the dashboard>` } });
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: mrkdwn(`incident ${incident.id}`) }] });
  return { text: mrkdwn(`${headline(message)}: ${incident.summary}`), blocks };
}

/** Slack's escaping of &, < and > (https://api.slack.com/reference/surfaces/formatting#escaping). */
function mrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A URL made safe inside `<url|label>`, where a `|` or `>` would end the link early. */
function linkTarget(url: string): string {
  return url.replace(/\|/g, '%7C').replace(/</g, '%3C').replace(/>/g, '%3E');
}
