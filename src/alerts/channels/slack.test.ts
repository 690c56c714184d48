import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSlack, SLACK_WEBHOOK_PATH, startFakeSlack } from '../../../test/fakes/slack.js';
import { OPENED, RESOLVED } from '../../../test/helpers/alert-messages.js';
import { PermanentError, RetryableError } from '../../sinks/errors.js';
import { testMessage } from '../message.js';
import { slackChannel } from './slack.js';

const log = pino({ level: 'silent' });
const signal = new AbortController().signal;
const fakes: FakeSlack[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});
async function slack() {
  const fake = await startFakeSlack();
  fakes.push(fake);
  return fake;
}
const open = (webhook_url: string, publicUrl?: string) =>
  slackChannel.open(slackChannel.options.parse({ webhook_url }), { name: 'ops', log, publicUrl });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('slack channel', () => {
  it('posts Block Kit text with the rule, what it is about, the counts and a link to the dashboard', async () => {
    const fake = await slack();
    await open(fake.url, 'https://calls.example.in').send(OPENED, { signal });
    expect(fake.messages).toHaveLength(1);
    const { text, blocks } = fake.messages[0]!;
    expect(text).toBe('Incident opened: dead_delivery (crm): Deliveries to the sink crm have gone dead');
    const shown = JSON.stringify(blocks);
    for (const part of ['*Rule*\\ndead_delivery', '*About*\\ncrm', '*Counts*\\ndead 3', OPENED.incident.id])
      expect(shown).toContain(part);
    expect(shown).toContain('<https://calls.example.in/ui/incidents|Open the dashboard>');
  });

  it('says how long a resolved incident lasted, and has no link without public_url', async () => {
    const fake = await slack();
    const channel = open(fake.url);
    await channel.send(RESOLVED, { signal });
    await channel.send(testMessage(), { signal });
    const [resolved, test] = fake.messages.map((m) => JSON.stringify(m.blocks));
    expect(resolved).toContain('*Lasted*\\n1h 5m 3s');
    expect(resolved).toContain('*Counts*\\ndead 4, retried 4');
    expect(resolved).not.toContain('Open the dashboard');
    expect(fake.messages[1]!.text).toBe('callhook alert test: Test message from callhook: this alert channel works');
    expect(test).toContain(':wave:');
  });

  it("reads Slack's errors: a refused payload is permanent, 429 is retried after Retry-After, 5xx retried", async () => {
    const fake = await slack();
    const channel = open(fake.url);
    fake.fail(400, 'invalid_payload');
    const refused = await failure(channel.send(OPENED, { signal }));
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused.message).toBe('HTTP 400: invalid_payload');
    fake.fail(429, 'rate_limited', { headers: { 'retry-after': '30' } });
    const limited = await failure(channel.send(OPENED, { signal }));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    fake.fail(503, 'service_unavailable');
    expect(await failure(channel.send(OPENED, { signal }))).toBeInstanceOf(RetryableError);
    await channel.send(OPENED, { signal });
    expect(fake.messages).toHaveLength(1);
  });

  it('never puts the webhook URL, its credential, in an error', async () => {
    const fake = await slack();
    const wrong = fake.url.replace(SLACK_WEBHOOK_PATH, '/services/T0001/B0002/wr0ngT0ken');
    const err = await failure(open(wrong).send(OPENED, { signal }));
    expect(err.message).toBe('HTTP 404: no_service');
    expect(err).toBeInstanceOf(PermanentError);
  });

  it('takes the slack sink’s webhook_url option, https only but to localhost', () => {
    const problem = (options: unknown) => slackChannel.options.safeParse(options).error?.issues[0]?.message;
    expect(problem({})).toBe('webhook_url must be an https:// Slack incoming webhook URL');
    expect(problem({ webhook_url: 'http://hooks.slack.com/services/x' })).toBe(
      'webhook_url must be https:// (plain http only to localhost)',
    );
    expect(problem({ webhook_url: 'https://hooks.slack.com/services/x', channel: '#ops' })).toMatch(/channel/);
  });
});
