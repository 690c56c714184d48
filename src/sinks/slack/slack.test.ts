import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { slackMessage, slackSink } from './slack.js';

const log = pino({ level: 'silent' });
/** The path of an incoming webhook is its credential. */
const WEBHOOK_PATH = '/services/T0001/B0002/s3cr3tT0kenXYZ';
const record = (data: CallRecord['data'] = {}, problems: CallRecord['problems'] = []): CallRecord => ({
  id: '019a0000-0000-7000-8000-000000000001',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems,
  data: {
    first_name: 'Asha',
    last_name: 'Rao',
    phone_number: '+919812345678',
    call_outcome: 'order placed',
    sentiment_analysis: 'Positive',
    call_summary: 'Ordered two kettles.',
    recording_url: 'https://rec.example/c1.mp3',
    ...data,
  },
});
const context = (signal = new AbortController().signal) => ({ attempt: 1, idempotencyKey: 'x:slack', signal, log });

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

/** Answers like hooks.slack.com: 200 "ok", or a status with a plain-text error code. */
async function fakeSlack(
  reply: (res: ServerResponse) => void = (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('ok'),
) {
  const r = await startReceiver((_req, res) => reply(res));
  receivers.push(r);
  return { url: `${r.url}${WEBHOOK_PATH}`, received: r.received };
}
const slackError =
  (status: number, code: string, headers: Record<string, string> = {}) =>
  (res: ServerResponse) =>
    res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(code);

const open = (options: Record<string, unknown>) =>
  slackSink.open(slackSink.options.parse(options), { name: 'slack', dataDir: '/nonexistent', log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );
const texts = (message: ReturnType<typeof slackMessage>) => JSON.stringify(message.blocks);

describe('slack sink', () => {
  it('posts text and blocks to the webhook, with the optional overrides', async () => {
    const { url, received } = await fakeSlack();
    await (
      await open({ webhook_url: url, channel: '#sales', username: 'callhook', icon_emoji: ':telephone_receiver:' })
    ).deliver(record(), context());
    const [got] = received;
    expect(got!.url).toBe(WEBHOOK_PATH);
    expect(got!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(got!.body);
    expect(body).toEqual({
      ...slackMessage(record()),
      channel: '#sales',
      username: 'callhook',
      icon_emoji: ':telephone_receiver:',
    });
  });

  it('lays out outcome, sentiment, caller, E.164 phone, summary and the recording', () => {
    const message = slackMessage(record());
    expect(message.text).toBe('Call from Asha Rao (+919812345678): order placed');
    expect(message.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '📞 Asha Rao (+919812345678)', emoji: true },
    });
    expect(message.blocks[1]).toEqual({
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: '*Outcome*\norder placed' },
        { type: 'mrkdwn', text: '*Sentiment*\n:slightly_smiling_face: Positive' },
        { type: 'mrkdwn', text: '*Caller*\nAsha Rao' },
        { type: 'mrkdwn', text: '*Phone*\n+919812345678' },
      ],
    });
    expect(texts(message)).toContain('*Summary*\\nOrdered two kettles.');
    expect(texts(message)).toContain('<https://rec.example/c1.mp3|Listen to the recording>');
    expect(texts(slackMessage(record({ recording_url: '' })))).not.toContain('recording');
  });

  it.each([
    ['Positive', ':slightly_smiling_face: Positive'],
    ['Neutral', ':neutral_face: Neutral'],
    ['Negative', ':slightly_frowning_face: Negative'],
    ['', ':grey_question: unknown'],
  ])('shows sentiment %j as %j', (sentiment, shown) => {
    expect(texts(slackMessage(record({ sentiment_analysis: sentiment })))).toContain(`*Sentiment*\\n${shown}`);
  });

  it('keeps a long summary within the 3000 characters of a section', () => {
    const summary = (
      slackMessage(record({ call_summary: 'word & '.repeat(2000) })).blocks as { text?: { text: string } }[]
    )[2]!.text!.text;
    expect(summary.length).toBeLessThanOrEqual(3000);
    expect(summary).toMatch(/^\*Summary\*\nword &amp; word/);
    expect(summary).toMatch(/(&amp;|\s|word)…$/);
  });

  it("escapes the caller's words so they cannot ping the channel or forge links", () => {
    const message = slackMessage(record({ call_summary: 'call <!channel> now <https://evil.example|bank>' }));
    expect(texts(message)).toContain('call &lt;!channel&gt; now &lt;https://evil.example|bank&gt;');
    expect(texts(slackMessage(record({ recording_url: 'https://rec.example/a|b>c' })))).toContain(
      '<https://rec.example/a%7Cb%3Ec|Listen',
    );
  });

  it('lists the problems of a record that has them', () => {
    const message = slackMessage(
      record({ call_outcome: '' }, [
        { field: 'call_outcome', code: 'missing_required', message: 'call_outcome is required' },
      ]),
    );
    expect(message.text).toBe('Call from Asha Rao (+919812345678): no outcome');
    expect(texts(message)).toContain(
      ':warning: *Problems*\\n• `call_outcome` missing_required: call_outcome is required',
    );
  });

  it.each([
    [400, 'invalid_payload'],
    [403, 'action_prohibited'],
    [404, 'no_service'],
    [410, 'channel_is_archived'],
  ])("treats Slack's %i %s as permanent", async (status, code) => {
    const { url } = await fakeSlack(slackError(status, code));
    const err = await failure((await open({ webhook_url: url })).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err).toMatchObject({ status, message: `HTTP ${status}: ${code}` });
  });

  it('retries on 429 with Retry-After and on 5xx', async () => {
    const limited = await fakeSlack(slackError(429, 'rate_limited', { 'retry-after': '30' }));
    const err = await failure((await open({ webhook_url: limited.url })).deliver(record(), context()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    const broken = await fakeSlack(slackError(500, 'rollup_error'));
    expect(await failure((await open({ webhook_url: broken.url })).deliver(record(), context()))).toBeInstanceOf(
      RetryableError,
    );
  });

  it('never puts the webhook URL in an error message', async () => {
    const errors: Error[] = [];
    const refused = await fakeSlack();
    await receivers.splice(0)[0]!.close();
    errors.push(await failure((await open({ webhook_url: refused.url })).deliver(record(), context())));
    const silent = await fakeSlack(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('timed out after 100 ms')), 100);
    errors.push(await failure((await open({ webhook_url: silent.url })).deliver(record(), context(controller.signal))));
    const gone = await fakeSlack(slackError(404, 'no_service'));
    errors.push(await failure((await open({ webhook_url: gone.url })).deliver(record(), context())));
    for (const err of errors) {
      expect(err).toBeInstanceOf(Error);
      expect(`${err.message} ${String((err.cause as Error | undefined)?.message)}`).not.toContain('s3cr3tT0ken');
    }
  });
});

describe('slack sink options', () => {
  const problem = (options: Record<string, unknown>) => {
    const issue = slackSink.options.safeParse(options).error?.issues[0];
    return issue && `${issue.path.join('.')}: ${issue.message}`;
  };

  it.each([
    [{}, /^webhook_url: /],
    [{ webhook_url: 'hooks.slack.com/services/x' }, /^webhook_url: webhook_url must be an https/],
    [{ webhook_url: 'http://hooks.slack.com/services/x' }, /^webhook_url: webhook_url must be https/],
    [
      { webhook_url: 'https://hooks.slack.com/services/x', icon_emoji: 'phone' },
      /^icon_emoji: icon_emoji must look like/,
    ],
    [{ webhook_url: 'https://hooks.slack.com/services/x', channel: '' }, /^channel: channel must not be empty/],
  ])('refuses %j naming the option', (options, message) => {
    expect(problem(options)).toMatch(message);
  });

  it('accepts https, and http only to localhost', () => {
    expect(slackSink.options.parse({ webhook_url: 'https://hooks.slack.com/services/T/B/x' })).toEqual({
      webhook_url: 'https://hooks.slack.com/services/T/B/x',
    });
    expect(slackSink.options.safeParse({ webhook_url: 'http://127.0.0.1:9/services/T/B/x' }).success).toBe(true);
  });
});
