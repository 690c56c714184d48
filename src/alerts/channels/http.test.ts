import pino from 'pino';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { OPENED, RESOLVED } from '../../../test/helpers/alert-messages.js';
import { type Receiver, type Responder, startReceiver } from '../../../test/helpers/receiver.js';
import { PermanentError, RetryableError } from '../../sinks/errors.js';
import { testMessage } from '../message.js';
import { httpChannel } from './http.js';

const log = pino({ level: 'silent' });
const signal = new AbortController().signal;
const SECRET = `whsec_${Buffer.from('alert-channel-signing-key-0123').toString('base64')}`;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
async function receiver(responder: Responder = (_req, res) => res.writeHead(204).end()) {
  const r = await startReceiver(responder);
  receivers.push(r);
  return r;
}
const open = (options: Record<string, unknown>, publicUrl?: string) =>
  httpChannel.open(httpChannel.options.parse(options), { name: 'hook', log, publicUrl });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('http channel', () => {
  it('POSTs {type, incident} as JSON, signed so that the Standard Webhooks library verifies it', async () => {
    const r = await receiver();
    const channel = open(
      { url: `${r.url}/alerts`, headers: { 'X-Team': 'ops' }, signing: { secret: SECRET } },
      'https://calls.example.in/',
    );
    await channel.send(OPENED, { signal });
    await channel.send(RESOLVED, { signal });
    await channel.send(testMessage(), { signal });
    expect(r.received.map((got) => [got.method, got.url])).toEqual([
      ['POST', '/alerts'],
      ['POST', '/alerts'],
      ['POST', '/alerts'],
    ]);
    const bodies = r.received.map((got) => new Webhook(SECRET).verify(got.body, got.headers as Record<string, string>));
    expect(bodies[0]).toEqual({
      type: 'incident.opened',
      incident: { ...OPENED.incident, url: 'https://calls.example.in/ui/incidents' },
    });
    expect(bodies.map((b) => (b as { type: string }).type)).toEqual([
      'incident.opened',
      'incident.resolved',
      'incident.test',
    ]);
    expect(r.received[1]!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-team': 'ops',
      'idempotency-key': `${OPENED.incident.id}:resolved`,
      'webhook-id': `${OPENED.incident.id}:resolved`,
    });
    const [first] = r.received;
    expect(() =>
      new Webhook(SECRET).verify(first!.body.replace('"dead":3', '"dead":0'), first!.headers as Record<string, string>),
    ).toThrow(WebhookVerificationError);
  });

  it('sends no signature without a secret, and the URL’s user:password as Basic', async () => {
    const r = await receiver();
    await open({ url: `${r.url.replace('http://', 'http://ops:pa55@')}/alerts` }).send(OPENED, { signal });
    expect(r.received[0]!.headers['webhook-signature']).toBeUndefined();
    expect(r.received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('ops:pa55').toString('base64')}`);
    expect(JSON.parse(r.received[0]!.body).incident).not.toHaveProperty('url');
  });

  it('fails retryably on 5xx and 429 with Retry-After, permanently on another 4xx', async () => {
    const r = await receiver((_req, res) => res.writeHead(429, { 'retry-after': '12' }).end('slow down'));
    const channel = open({ url: r.url });
    expect(await failure(channel.send(OPENED, { signal }))).toMatchObject({ status: 429, retryAfterMs: 12_000 });
    r.respond((_req, res) => res.writeHead(502).end());
    expect(await failure(channel.send(OPENED, { signal }))).toBeInstanceOf(RetryableError);
    r.respond((_req, res) => res.writeHead(401).end('bad token'));
    const refused = await failure(channel.send(OPENED, { signal }));
    expect(refused).toBeInstanceOf(PermanentError);
    expect(refused.message).toBe('HTTP 401: bad token');
  });

  it("takes the http sink's url, headers and signing options, and nothing else", () => {
    const problem = (options: unknown) => {
      const issue = httpChannel.options.safeParse(options).error?.issues[0];
      return issue && `${issue.path.join('.')}: ${issue.message}`;
    };
    expect(problem({ url: 'https://x.in', signing: { secret: 'whsec_short' } })).toMatch(/^signing\.secret: /);
    expect(problem({ url: 'https://x.in', headers: { 'Webhook-Signature': 'x' } })).toBe(
      'headers.Webhook-Signature: header Webhook-Signature is set by callhook on every attempt',
    );
    expect(problem({ url: 'https://x.in', method: 'PUT' })).toMatch(/method/);
    expect(problem({ url: 'https://u:p@x.in', headers: { Authorization: 'Bearer t' } })).toMatch(/^url: /);
  });
});
