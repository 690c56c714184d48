import { z } from 'zod';
import type { CallRecord } from '../../record.js';
import { sendRequest } from '../shared/http-response.js';
import { caller, truncate as cutText, text } from '../shared/record-fields.js';
import { defineSinkType } from '../sink.js';

/**
 * Block Kit limits (https://api.slack.com/reference/block-kit/blocks): longer text makes Slack refuse the whole
 * message.
 */
const SECTION_TEXT = 3000;
const FIELD_TEXT = 2000;
const HEADER_TEXT = 150;
/** Slack truncates `text` past 40,000 characters; a notification needs far less. */
const FALLBACK_TEXT = 300;

const SENTIMENT_EMOJI: Readonly<Record<string, string>> = {
  positive: ':slightly_smiling_face:',
  neutral: ':neutral_face:',
  negative: ':slightly_frowning_face:',
};

/** The webhook URL is itself the credential, so only https leaves the machine; plain http is for a local fake. */
export const webhookUrl = z
  .url({
    protocol: /^https?$/,
    error: 'webhook_url must be an https:// Slack incoming webhook URL',
  })
  .refine(
    (value) => {
      // zod runs this check even after the URL check failed; that failure is the one worth reporting.
      if (!URL.canParse(value)) return true;
      const { protocol, hostname } = new URL(value);
      return protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(hostname);
    },
    { error: 'webhook_url must be https:// (plain http only to localhost)' },
  );

/** Posts a readable summary of each call to a Slack channel through an incoming webhook. */
export const slackSink = defineSinkType({
  type: 'slack',
  secretOptions: ['webhook_url'],
  options: z.strictObject({
    webhook_url: webhookUrl,
    // Honoured only by legacy webhooks; a Slack app's webhook always posts as the app to its own channel.
    channel: z.string().min(1, { error: 'channel must not be empty' }).optional(),
    username: z.string().min(1, { error: 'username must not be empty' }).optional(),
    icon_emoji: z
      .string()
      .regex(/^:[a-z0-9_+'-]+:$/, { error: 'icon_emoji must look like :telephone_receiver:' })
      .optional(),
  }),
  open({ webhook_url: url, channel, username, icon_emoji }) {
    return {
      async deliver(record, { signal }) {
        const body = JSON.stringify({ ...slackMessage(record), channel, username, icon_emoji });
        const headers = { 'content-type': 'application/json', 'user-agent': 'callhook' };
        const response = await sendRequest(url, { method: 'POST', headers, body }, { signal });
        // Slack answers 200 "ok"; errors come as 4xx/5xx with a plain-text code, mapped by sendRequest.
        await response.body?.cancel();
      },
    };
  },
});

/** The `text` fallback (notifications, screen readers) and the Block Kit layout of one call. */
export function slackMessage(record: CallRecord): { text: string; blocks: unknown[] } {
  const value = (field: string) => text(record, field);
  const { name, phone } = caller(record);
  const outcome = value('call_outcome') ?? 'no outcome';
  const sentiment = value('sentiment_analysis');
  const emoji = (sentiment && SENTIMENT_EMOJI[sentiment.toLowerCase()]) ?? ':grey_question:';
  const who = name && phone ? `${name} (${phone})` : (name ?? phone ?? 'unknown caller');

  const field = (label: string, text: string) => ({
    type: 'mrkdwn',
    text: truncate(`*${label}*\n${escapeMrkdwn(text)}`, FIELD_TEXT),
  });
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`📞 ${who}`, HEADER_TEXT), emoji: true } },
    {
      type: 'section',
      fields: [
        field('Outcome', outcome),
        { type: 'mrkdwn', text: truncate(`*Sentiment*\n${emoji} ${escapeMrkdwn(sentiment ?? 'unknown')}`, FIELD_TEXT) },
        field('Caller', name ?? 'unknown'),
        field('Phone', phone ?? 'unknown'),
      ],
    },
  ];
  const summary = value('call_summary');
  if (summary) blocks.push(section(`*Summary*\n${escapeMrkdwn(summary)}`));
  const recording = recordingLink(value('recording_url'));
  if (recording) blocks.push(section(`:studio_microphone: <${recording}|Listen to the recording>`));
  if (record.problems.length > 0) {
    const lines = record.problems.map(
      (p) => `• \`${escapeMrkdwn(p.field)}\` ${escapeMrkdwn(p.code)}: ${escapeMrkdwn(p.message)}`,
    );
    blocks.push(section(`:warning: *Problems*\n${lines.join('\n')}`));
  }
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: escapeMrkdwn(`${record.hook} · ${record.id} · ${record.received_at}`) }],
  });
  return { text: truncate(escapeMrkdwn(`Call from ${who}: ${outcome}`), FALLBACK_TEXT), blocks };
}

function section(text: string) {
  return { type: 'section', text: { type: 'mrkdwn', text: truncate(text, SECTION_TEXT) } };
}

/**
 * Callers' words reach mrkdwn, where `<!channel>` would ping everyone: Slack asks for &, < and > to be escaped
 * (https://api.slack.com/reference/surfaces/formatting#escaping).
 */
function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Cut as every sink cuts (record-fields.ts), and never inside an entity escapeMrkdwn() made. */
function truncate(value: string, max: number): string {
  const cut = cutText(value, max);
  return cut === value ? value : cut.replace(/&[a-z]{0,4}…$/, '…');
}

/** An http(s) URL made safe inside `<url|label>`, where a `|` or `>` would end the link early. */
function recordingLink(raw: string | undefined): string | undefined {
  if (!raw || !URL.canParse(raw)) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const href = url.href.replace(/\|/g, '%7C').replace(/</g, '%3C').replace(/>/g, '%3E');
  return href.length <= SECTION_TEXT - 100 ? href : undefined;
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default slackSink;
