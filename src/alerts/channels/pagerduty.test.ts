import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakePagerDuty, startFakePagerDuty } from '../../../test/fakes/pagerduty.js';
import { OPENED, RESOLVED } from '../../../test/helpers/alert-messages.js';
import { startReceiver } from '../../../test/helpers/receiver.js';
import { PermanentError, RetryableError } from '../../sinks/errors.js';
import { testMessage } from '../message.js';
import { pagerdutyChannel } from './pagerduty.js';

const log = pino({ level: 'silent' });
const signal = new AbortController().signal;
const fakes: FakePagerDuty[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});
async function pagerduty() {
  const fake = await startFakePagerDuty();
  fakes.push(fake);
  return fake;
}
const open = (options: Record<string, unknown>, publicUrl?: string) =>
  pagerdutyChannel.open(pagerdutyChannel.options.parse(options), { name: 'pager', log, publicUrl });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('pagerduty channel', () => {
  it('triggers when an incident opens and resolves when it resolves, both with dedup_key = the incident id', async () => {
    const fake = await pagerduty();
    const channel = open({ routing_key: fake.routingKey, api_url: fake.url }, 'https://calls.example.in');
    await channel.send(OPENED, { signal });
    expect(fake.alerts.get(OPENED.incident.id)).toBe('triggered');
    await channel.send(RESOLVED, { signal });
    expect(fake.alerts.get(OPENED.incident.id)).toBe('resolved');
    const [trigger, resolve] = fake.events;
    expect(trigger).toEqual({
      routing_key: fake.routingKey,
      event_action: 'trigger',
      dedup_key: OPENED.incident.id,
      payload: {
        summary: 'Incident opened: dead_delivery (crm): Deliveries to the sink crm have gone dead',
        source: 'calls.example.in',
        severity: 'error',
        timestamp: OPENED.incident.opened_at,
        component: 'crm',
        class: 'dead_delivery',
        custom_details: { incident: OPENED.incident.id, rule: 'dead_delivery', key: 'crm', counts: { dead: 3 } },
      },
      client: 'callhook',
      client_url: 'https://calls.example.in/ui/incidents',
      links: [{ href: 'https://calls.example.in/ui/incidents', text: 'callhook dashboard' }],
    });
    expect(resolve).toEqual({ routing_key: fake.routingKey, event_action: 'resolve', dedup_key: OPENED.incident.id });
  });

  it('tests with an info alert resolved at once, so nobody is left with one to close', async () => {
    const fake = await pagerduty();
    const message = testMessage();
    await open({ routing_key: fake.routingKey, api_url: fake.url }).send(message, { signal });
    expect(fake.events.map((e) => [e.event_action, e.dedup_key, e.payload?.severity])).toEqual([
      ['trigger', message.incident.id, 'info'],
      ['resolve', message.incident.id, undefined],
    ]);
    expect(fake.alerts.get(message.incident.id)).toBe('resolved');
  });

  it('is refused for good with 400, retried on 429 with Retry-After and on 5xx', async () => {
    const fake = await pagerduty();
    const wrongKey = await failure(open({ routing_key: 'not-the-key', api_url: fake.url }).send(OPENED, { signal }));
    expect(wrongKey).toBeInstanceOf(PermanentError);
    expect(wrongKey.message).toMatch(/^HTTP 400: .*Invalid routing key/);
    const channel = open({ routing_key: fake.routingKey, api_url: fake.url });
    fake.fail(429, { retryAfter: '60' });
    const throttled = await failure(channel.send(OPENED, { signal }));
    expect(throttled).toBeInstanceOf(RetryableError);
    expect(throttled).toMatchObject({ status: 429, retryAfterMs: 60_000 });
    expect(throttled.message).toMatch(/throttle event/);
    fake.fail(503);
    expect(await failure(channel.send(OPENED, { signal }))).toMatchObject({ status: 503 });
    expect(fake.events).toEqual([]);
  });

  it('takes a 2xx without a dedup_key for no answer of the Events API', async () => {
    const fake = await pagerduty();
    const proxy = await startReceiver((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi'));
    try {
      const err = await failure(open({ routing_key: fake.routingKey, api_url: proxy.url }).send(OPENED, { signal }));
      expect(err).toBeInstanceOf(RetryableError);
      expect(err.message).toBe('PagerDuty answered HTTP 200 without a dedup_key: not an Events API v2 reply');
    } finally {
      await proxy.close();
    }
  });

  it('defaults api_url to https://events.pagerduty.com and needs a routing_key', () => {
    expect(pagerdutyChannel.options.parse({ routing_key: 'k' }).api_url).toBe('https://events.pagerduty.com');
    expect(pagerdutyChannel.options.safeParse({}).error?.issues[0]?.path).toEqual(['routing_key']);
    expect(pagerdutyChannel.options.safeParse({ routing_key: 'k', api_url: 'http://pd.example' }).success).toBe(false);
  });
});
