import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../../../test/helpers/receiver.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { httpSink, sign } from './http.js';

const log = pino({ level: 'silent' });
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const record: CallRecord = {
  id: '019a0000-0000-7000-8000-000000000001',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', phone_number: '+919812345678', call_summary: 'Wants a “refund” — ok' },
  extra: {},
  problems: [],
};
const context = (over: { attempt?: number; signal?: AbortSignal } = {}) => ({
  attempt: 1,
  idempotencyKey: `${record.id}:crm`,
  signal: new AbortController().signal,
  log,
  ...over,
});

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

/** A real receiver on 127.0.0.1 that keeps what it got, byte for byte, and answers as scripted. */
async function receiver(reply: (res: ServerResponse) => void = (res) => res.writeHead(204).end()) {
  const r = await startReceiver((_req, res) => reply(res));
  receivers.push(r);
  return { url: `${r.url}/calls`, received: r.received };
}

const open = (options: Record<string, unknown>) =>
  httpSink.open(httpSink.options.parse(options), { name: 'crm', dataDir: '/nonexistent', log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err,
  );
/** The option path and message, as the registry prints them at start-up. */
const problem = (options: Record<string, unknown>) => {
  const issue = httpSink.options.safeParse(options).error?.issues[0];
  return issue && `${issue.path.join('.')}: ${issue.message}`;
};

describe('http sink', () => {
  it('POSTs the record as JSON with the idempotency key, the attempt and the configured headers', async () => {
    const { url, received } = await receiver();
    const sink = await open({ url, headers: { Authorization: 'Bearer t0ken', 'X-Team': 'sales' } });
    await sink.deliver(record, context({ attempt: 3 }));
    expect(received).toHaveLength(1);
    const [got] = received;
    expect(got!.method).toBe('POST');
    expect(got!.body).toBe(JSON.stringify(record));
    expect(got!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'callhook',
      'idempotency-key': `${record.id}:crm`,
      'x-callhook-attempt': '3',
      authorization: 'Bearer t0ken',
      'x-team': 'sales',
    });
    expect(got!.headers['webhook-signature']).toBeUndefined();
  });

  it("sends a URL's user:password as Authorization: Basic, as curl does, and the URL without it", async () => {
    const { url, received } = await receiver();
    const withUser = url.replace('http://', 'http://ops%40team:p%C3%A4ss%3Aw0rd@');
    await (await open({ url: withUser })).deliver(record, context());
    expect(received[0]!.headers.authorization).toBe(`Basic ${Buffer.from('ops@team:päss:w0rd').toString('base64')}`);
    expect(received[0]!.url).toBe('/calls');
  });

  it('uses the configured method, and a configured User-Agent replaces the default', async () => {
    const { url, received } = await receiver();
    await (await open({ url, method: 'PUT', headers: { 'User-Agent': 'crm-bridge/2' } })).deliver(record, context());
    expect(received[0]).toMatchObject({ method: 'PUT', headers: { 'user-agent': 'crm-bridge/2' } });
  });

  it('signs the exact body sent in the Standard Webhooks format', async () => {
    const { url, received } = await receiver();
    const before = Math.floor(Date.now() / 1000);
    await (await open({ url, signing: { secret: SECRET } })).deliver(record, context());
    const { headers, body } = received[0]!;
    expect(headers['webhook-id']).toBe(`${record.id}:crm`);
    const timestamp = Number(headers['webhook-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    // What a receiver does: decode the secret after its prefix and recompute over id.timestamp.body.
    const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${timestamp}.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it("signs so that the Standard Webhooks library's own Webhook.verify accepts the delivery", async () => {
    const { url, received } = await receiver();
    await (await open({ url, signing: { secret: SECRET } })).deliver(record, context());
    const { headers, body } = received[0]!;
    const verified = new Webhook(SECRET).verify(body, headers as Record<string, string>);
    expect(verified).toEqual(JSON.parse(body));
    expect(() => new Webhook(SECRET).verify(`${body} `, headers as Record<string, string>)).toThrow(
      WebhookVerificationError,
    );
  });

  it('matches the test vector of the Standard Webhooks reference libraries', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(sign(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('fails retryably on 503 with Retry-After and permanently on 410', async () => {
    const busy = await receiver((res) => res.writeHead(503, { 'retry-after': '30' }).end('maintenance'));
    const err = await failure((await open({ url: busy.url })).deliver(record, context()));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err).toMatchObject({ status: 503, retryAfterMs: 30_000, message: 'HTTP 503: maintenance' });
    const gone = await receiver((res) => res.writeHead(410).end('endpoint removed'));
    expect(await failure((await open({ url: gone.url })).deliver(record, context()))).toBeInstanceOf(PermanentError);
  });

  it("stops when the worker's signal aborts, with the worker's reason", async () => {
    const { url } = await receiver(() => undefined);
    const controller = new AbortController();
    const reason = new Error('timed out after 100 ms');
    setTimeout(() => controller.abort(reason), 100);
    expect(await failure((await open({ url })).deliver(record, context({ signal: controller.signal })))).toBe(reason);
  });
});

describe('http sink options', () => {
  it('defaults to POST and no extra headers (the attempt timeout is the sink entry timeout, kept by the worker)', () => {
    expect(httpSink.options.parse({ url: 'https://crm.example/hooks' })).toEqual({
      url: 'https://crm.example/hooks',
      method: 'POST',
      headers: {},
    });
  });

  it.each([
    [{}, /^url: /],
    [{ url: 'crm.example/hooks' }, /^url: url must be an absolute http/],
    [{ url: 'ftp://crm.example/hooks' }, /^url: url must be an absolute http/],
    [{ url: 'https://crm.example', method: 'GET' }, /^method: method must be POST, PUT or PATCH$/],
    [
      { url: 'https://crm.example', headers: { 'Bad Name': 'x' } },
      /^headers\.Bad Name: header Bad Name is not a valid header name$/,
    ],
    [
      { url: 'https://crm.example', headers: { 'X-A': 'a\nb' } },
      /^headers\.X-A: header X-A has a value that cannot be sent/,
    ],
    [
      { url: 'https://crm.example', headers: { 'Idempotency-Key': 'x' } },
      /^headers\.Idempotency-Key: .* is set by callhook/,
    ],
    [
      { url: 'https://crm.example', signing: { secret: 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } },
      /^signing\.secret: signing\.secret must be "whsec_"/,
    ],
    [
      { url: 'https://crm.example', signing: { secret: 'whsec_c2hvcnQ=' } },
      /^signing\.secret: signing\.secret must be "whsec_"/,
    ],
    [
      { url: 'https://crm.example', signing: { secret: 'whsec_not base64!' } },
      /^signing\.secret: signing\.secret must be "whsec_"/,
    ],
    [{ url: 'https://crm.example', retries: 3 }, /^: Unrecognized key/],
    [
      { url: 'https://u:p@crm.example', headers: { authorization: 'Bearer x' } },
      /^url: url carries user:password and headers an Authorization too/,
    ],
  ])('refuses %j naming the option', (options, message) => {
    expect(problem(options)).toMatch(message);
  });

  it('never echoes a bad signing secret', () => {
    expect(problem({ url: 'https://crm.example', signing: { secret: 'whsec_c2hvcnQ=' } })).not.toContain('c2hvcnQ');
  });
});
