import { startReceiver } from '../helpers/receiver.js';

/**
 * A local stand-in for a Slack incoming webhook (https://api.slack.com/messaging/webhooks), for tests only: a POST of
 * JSON to the webhook's path, with `text` or `blocks`, answered as Slack answers: 200 `ok`, or a status with a
 * plain-text code (https://api.slack.com/messaging/webhooks#handling_errors): 400 `invalid_payload`, 404 `no_service`
 * for a path it does not know; and, when told, 429 with `Retry-After` (https://api.slack.com/apis/rate-limits).
 */

/** The path of an incoming webhook is its credential. */
export const SLACK_WEBHOOK_PATH = '/services/T0001/B0002/s3cr3tSl4ckT0ken';

export interface SlackMessage {
  text?: string;
  blocks?: unknown[];
  [key: string]: unknown;
}

export interface FakeSlack {
  /** The webhook's URL, its secret path included. */
  url: string;
  /** The messages Slack accepted. */
  messages: SlackMessage[];
  /** The next `times` requests get this status and code (and headers) instead of `ok`. */
  fail(status: number, code: string, options?: { times?: number; headers?: Record<string, string> }): void;
  close(): Promise<void>;
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const messages: SlackMessage[] = [];
  let failures: { status: number; code: string; headers: Record<string, string>; left: number } | undefined;
  const receiver = await startReceiver((req, res) => {
    const answer = (status: number, code: string, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(code);
    if (req.method !== 'POST' || req.url !== SLACK_WEBHOOK_PATH) return answer(404, 'no_service');
    if (failures && failures.left > 0) {
      failures.left -= 1;
      return answer(failures.status, failures.code, failures.headers);
    }
    if (!req.headers['content-type']?.startsWith('application/json')) return answer(400, 'invalid_payload');
    let message: SlackMessage;
    try {
      message = JSON.parse(req.body) as SlackMessage;
    } catch {
      return answer(400, 'invalid_payload');
    }
    const hasText = typeof message.text === 'string' && message.text !== '';
    const hasBlocks = Array.isArray(message.blocks) && message.blocks.length > 0 && message.blocks.length <= 50;
    if (!hasText && !hasBlocks) return answer(400, 'no_text');
    if (message.blocks !== undefined && !hasBlocks) return answer(400, 'invalid_blocks');
    messages.push(message);
    return res.writeHead(200, { 'content-type': 'text/html' }).end('ok');
  });
  return {
    url: `${receiver.url}${SLACK_WEBHOOK_PATH}`,
    messages,
    fail(status, code, { times = 1, headers = {} } = {}) {
      failures = { status, code, headers, left: times };
    },
    close: () => receiver.close(),
  };
}
