import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsAdmin, natsAdmin } from '../../../test/helpers/nats-stream.js';
import { closedPort, until } from '../../../test/helpers/server.js';
import { serviceUrl } from '../../../test/helpers/services.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { Sink } from '../sink.js';
import { natsSink } from './nats.js';
import { DUPLICATE_WINDOW_MS } from './stream.js';

const log = pino({ level: 'silent' });
const record: CallRecord = {
  id: '019a0000-0000-7000-8000-0000000000a1',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', call_summary: 'Ordered two kettles.' },
  extra: { call_id: 'c1' },
  problems: [],
};
const context = (idempotencyKey = `${record.id}:bus`) => ({
  attempt: 1,
  idempotencyKey,
  signal: new AbortController().signal,
  log,
});
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err,
  );
/** The option path and message, as the registry prints them at start-up. */
const problem = (options: Record<string, unknown>) => {
  const issue = natsSink.options.safeParse(options).error?.issues[0];
  return issue && `${issue.path.join('.')}: ${issue.message}`;
};

describe('nats sink options (docs/reference.md#queues-and-databases)', () => {
  it('defaults to the local server and callhook.calls.<hook>, with no stream of its own', () => {
    const options = natsSink.options.parse({});
    expect(options.servers).toBe('nats://127.0.0.1:4222');
    expect(options.subject.render(record)).toBe('callhook.calls.end-of-call');
    expect(options.subject.filter).toBe('callhook.calls.*');
    expect(options.stream).toBeUndefined();
    expect(natsSink.secretOptions).toEqual(['token', 'pass']);
  });

  it('takes one server or a list, and a subject naming the record fixed roots', () => {
    expect(natsSink.options.parse({ servers: ['nats://a:4222', 'b:4223', 'tls://c:4222'] }).servers).toEqual([
      'nats://a:4222',
      'b:4223',
      'tls://c:4222',
    ]);
    const { subject } = natsSink.options.parse({
      subject: 'crm.{{ source }}.{{hook}}.{{ revision }}',
      stream: 'CALLS',
    });
    expect(subject.render({ ...record, revision: 2 })).toBe('crm.webhook.end-of-call.2');
    expect(subject.filter).toBe('crm.*.*.*');
    // Without a stream of callhook's making, a placeholder may share its token: the user's stream decides.
    expect(natsSink.options.parse({ subject: 'crm.{{ hook }}.r{{ revision }}' }).subject.render(record)).toBe(
      'crm.end-of-call.r1',
    );
    expect(natsSink.options.parse({ subject: 'calls.{{ id }}', user: 'callhook', pass: 'pw-1234' }).user).toBe(
      'callhook',
    );
  });

  it('refuses a bad option, naming it', () => {
    expect(problem({ subject: 'calls.{{ data.call_outcome }}' })).toMatch(
      /^subject: \{\{ data\.call_outcome \}\} may render text that is no subject token.*hook, id, source, revision/,
    );
    expect(problem({ subject: 'calls.{{ first_name }}' })).toMatch(/^subject: \{\{ first_name \}\}/);
    expect(problem({ subject: 'calls.{{ received_at }}' })).toMatch(/^subject: /);
    expect(problem({ subject: 'calls.{{ nope.x }}' })).toMatch(/^subject: \{\{ nope\.x \}\}: unknown root/);
    expect(problem({ subject: 'my calls.{{ hook }}' })).toBe('subject: "my calls.{{ hook }}" holds whitespace');
    expect(problem({ subject: 'calls..{{ hook }}' })).toMatch(/^subject: .* has an empty token/);
    expect(problem({ subject: 'calls.{{ hook }}.' })).toMatch(/^subject: .* has an empty token/);
    expect(problem({ subject: 'calls.>' })).toMatch(/^subject: .* wildcard/);
    expect(problem({ subject: 'calls.x{{ hook }}', stream: 'CALLS' })).toMatch(
      /^subject: with stream, each \{\{ … \}\} must be a whole token/,
    );
    expect(problem({ subject: 'calls.x{{ hook }}' })).toBeUndefined();
    expect(problem({ stream: 'calls.all' })).toMatch(/^stream: stream must not hold whitespace, \./);
    expect(problem({ stream: '' })).toMatch(/^stream: stream must not be empty/);
    expect(problem({ servers: 'http://127.0.0.1:4222' })).toBe(
      'servers: a server must be a NATS address such as nats://127.0.0.1:4222 (nats:// or tls://)',
    );
    expect(problem({ servers: [] })).toMatch(/^servers: servers must name at least one server/);
    expect(problem({ servers: ['nats://a:4222', 'nats://callhook:pw-1234@b:4222'] })).toBe(
      'servers.1: give credentials as token or user + pass, not in the server URL',
    );
    expect(problem({ token: 'tok-1234', user: 'u', pass: 'p' })).toBe('token: give token or user + pass, not both');
    expect(problem({ user: 'u' })).toBe('pass: pass is required with user');
    expect(problem({ pass: 'p' })).toBe('user: user is required with pass');
    expect(natsSink.options.safeParse({ subjet: 'x' }).error?.issues[0]).toMatchObject({
      code: 'unrecognized_keys',
      keys: ['subjet'],
    });
  });
});

describe('nats sink, a subject naming the platform (docs/reference.md#queues-and-databases)', () => {
  const fromRetell = { ...record, platform: 'retell' } as CallRecord;

  it('takes {{ platform }} as one token, also as the filter of a stream of its own', () => {
    const { subject } = natsSink.options.parse({ subject: 'calls.{{ platform }}.{{ hook }}', stream: 'CALLS' });
    expect(subject.render(fromRetell)).toBe('calls.retell.end-of-call');
    expect(subject.filter).toBe('calls.*.*');
  });

  it('makes a call with no platform a permanent error at delivery, saying which placeholder is empty, before connecting', async () => {
    const port = await closedPort();
    const sink = await natsSink.open(
      natsSink.options.parse({ servers: `nats://127.0.0.1:${port}`, subject: 'calls.{{ platform }}' }),
      { name: 'bus', dataDir: '/nonexistent', log },
    );
    const err = await failure(sink.deliver(record, context()));
    await sink.close?.();
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toBe(
      'NATS subject: {{ platform }} is empty for this record, and a subject token cannot be empty (a call with no platform cannot go to this subject; leave such calls out with when)',
    );
  });
});

describe('nats sink, a server that is not there', () => {
  it('opens nothing in create(), and a delivery to it is retryable', async () => {
    const port = await closedPort();
    const sink = await natsSink.open(natsSink.options.parse({ servers: `nats://127.0.0.1:${port}` }), {
      name: 'bus',
      dataDir: '/nonexistent',
      log,
    });
    const err = await failure(sink.deliver(record, context()));
    expect(err).toBeInstanceOf(RetryableError);
    expect((err as Error).message).toMatch(new RegExp(`^NATS at 127\\.0\\.0\\.1:${port}: cannot connect`));
    await sink.close?.();
  });
});

const url = serviceUrl('nats');

describe.skipIf(!url)('nats sink against the real server', () => {
  let admin: NatsAdmin;
  const sinks: Sink[] = [];
  const open = async (options: Record<string, unknown>) => {
    const sink = await natsSink.open(natsSink.options.parse({ servers: url, ...options }), {
      name: 'bus',
      dataDir: '/nonexistent',
      log,
    });
    sinks.push(sink);
    return sink;
  };
  beforeAll(async () => {
    admin = await natsAdmin(url!);
  });
  afterAll(async () => {
    for (const sink of sinks) await sink.close?.();
    await admin?.close();
  });

  it('creates a missing stream with a 24-hour duplicate window, publishes the record as JSON with Nats-Msg-Id, and drops a repeat', async () => {
    const { stream, prefix } = admin.unique();
    admin.forget(stream);
    const sink = await open({ stream, subject: `${prefix}.{{ hook }}` });
    await sink.deliver(record, context());
    await sink.deliver(record, context()); // the same delivery again: a duplicate acknowledgement, and success
    const info = await admin.jsm.streams.info(stream);
    expect(info.config.subjects).toEqual([`${prefix}.*`]);
    expect(info.config.duplicate_window).toBe(DUPLICATE_WINDOW_MS * 1_000_000);
    expect(await admin.messages(stream)).toEqual([
      { subject: `${prefix}.end-of-call`, msgId: `${record.id}:bus`, body: JSON.parse(JSON.stringify(record)) },
    ]);

    // An edited call (docs/reference.md#editing-a-call) has a key of its own, so the stream keeps it as a new message.
    const edited: CallRecord = {
      ...record,
      revision: 2,
      data: { ...record.data, call_summary: 'Ordered three kettles.' },
    };
    await sink.deliver(edited, context(`${record.id}:bus:r2`));
    await sink.deliver(edited, context(`${record.id}:bus:r2`));
    const messages = await admin.messages(stream);
    expect(messages.map((m) => [m.msgId, m.body.revision])).toEqual([
      [`${record.id}:bus`, 1],
      [`${record.id}:bus:r2`, 2],
    ]);
    expect(messages[1]!.body).toMatchObject({ data: { call_summary: 'Ordered three kettles.' } });
  });

  it("publishes a call from another platform under its platform's token", async () => {
    const { stream, prefix } = admin.unique();
    admin.forget(stream);
    const sink = await open({ stream, subject: `${prefix}.{{ platform }}` });
    await sink.deliver({ ...record, platform: 'vapi' } as CallRecord, context());
    expect((await admin.messages(stream)).map((m) => m.subject)).toEqual([`${prefix}.vapi`]);
  });

  it('uses an existing stream as it is, with its own subjects and window', async () => {
    const { stream, prefix } = admin.unique();
    await admin.addStream({ name: stream, subjects: [`${prefix}.>`], duplicate_window: 60_000_000_000 });
    const sink = await open({ stream, subject: `${prefix}.calls.{{ hook }}` });
    await sink.deliver(record, context());
    const info = await admin.jsm.streams.info(stream);
    expect(info.config).toMatchObject({ subjects: [`${prefix}.>`], duplicate_window: 60_000_000_000 });
    expect((await admin.messages(stream)).map((m) => m.subject)).toEqual([`${prefix}.calls.end-of-call`]);
  });

  it('publishes to a stream it was not told of, and a subject no stream listens on is a permanent error naming it', async () => {
    const { stream, prefix } = admin.unique();
    await admin.addStream({ name: stream, subjects: [`${prefix}.in.*`] });
    await (await open({ subject: `${prefix}.in.{{ hook }}` })).deliver(record, context());
    expect(await admin.messages(stream)).toHaveLength(1);

    const err = await failure((await open({ subject: `${prefix}.nowhere.{{ hook }}` })).deliver(record, context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toBe(
      `NATS at ${new URL(url!).host}: publish to ${prefix}.nowhere.end-of-call: no JetStream stream listens on subject ${prefix}.nowhere.end-of-call (create one whose subjects match it, or set the sink's stream option)`,
    );
  });

  it('a stream deleted under it: the delivery is dead, and the next one (a retry by hand) makes the stream again', async () => {
    const { stream, prefix } = admin.unique();
    admin.forget(stream);
    const sink = await open({ stream, subject: `${prefix}.{{ hook }}` });
    await sink.deliver(record, context('before:bus'));
    await admin.jsm.streams.delete(stream);
    expect(await failure(sink.deliver(record, context('lost:bus')))).toBeInstanceOf(PermanentError);
    await sink.deliver(record, context('lost:bus'));
    expect((await admin.messages(stream)).map((m) => m.msgId)).toEqual(['lost:bus']);
  });

  it('fails at once while the connection is down, and delivers once it is back', async () => {
    const proxy = await startTcpProxy(url!, 4222);
    try {
      const { stream, prefix } = admin.unique();
      admin.forget(stream);
      const sink = await open({ servers: proxy.url(url!), stream, subject: `${prefix}.{{ hook }}` });
      await sink.deliver(record, context('first:bus'));
      await proxy.down();
      const err = await failure(sink.deliver(record, context('second:bus')));
      expect(err).toBeInstanceOf(RetryableError);
      expect((err as Error).message).toBe(
        `NATS at 127.0.0.1:${proxy.port}: connection lost, the client is reconnecting`,
      );
      await proxy.up();
      // The client reconnects on its own; until it has, a delivery fails as above and is tried again.
      await until(
        () =>
          sink.deliver(record, context('second:bus')).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 15_000, everyMs: 200 },
      );
      expect((await admin.messages(stream)).map((m) => m.msgId)).toEqual(['first:bus', 'second:bus']);
    } finally {
      await proxy.close();
    }
  });
});
