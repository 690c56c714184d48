import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeSmtp, startFakeSmtp } from '../../../test/fakes/smtp.js';
import { OPENED, RESOLVED } from '../../../test/helpers/alert-messages.js';
import { closedPort } from '../../../test/helpers/server.js';
import { PermanentError, RetryableError } from '../../sinks/errors.js';
import { testMessage } from '../message.js';
import { emailChannel, transportOptions } from './email.js';

const log = pino({ level: 'silent' });
const signal = new AbortController().signal;
const servers: FakeSmtp[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
async function smtp() {
  const server = await startFakeSmtp();
  servers.push(server);
  return server;
}
const urlOf = (server: FakeSmtp, password = server.password) =>
  `smtp://${encodeURIComponent(server.user)}:${encodeURIComponent(password)}@${server.host}:${server.port}`;
const open = (options: Record<string, unknown>, publicUrl?: string) =>
  emailChannel.open(emailChannel.options.parse(options), { name: 'mail', log, publicUrl });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

describe('email channel', () => {
  it('logs in with the URL’s user and password and sends one plain-text e-mail per message', async () => {
    const server = await smtp();
    const channel = open(
      { smtp_url: urlOf(server), from: 'callhook <alerts@example.in>', to: ['ops@example.in', 'oncall@example.in'] },
      'https://calls.example.in',
    );
    try {
      await channel.send(OPENED, { signal });
      await channel.send(RESOLVED, { signal });
    } finally {
      await channel.close?.();
    }
    expect(server.mails).toHaveLength(2);
    const [opened, resolved] = server.mails;
    expect(opened).toMatchObject({
      user: 'alerts@example.in',
      mailFrom: 'alerts@example.in',
      rcptTo: ['ops@example.in', 'oncall@example.in'],
    });
    expect(opened!.headers.get('subject')).toBe('[callhook] Incident opened: dead_delivery (crm)');
    expect(opened!.headers.get('from')).toBe('callhook <alerts@example.in>');
    expect(opened!.headers.get('to')).toBe('ops@example.in, oncall@example.in');
    expect(opened!.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(opened!.body).toBe(
      [
        'Incident opened: dead_delivery (crm)',
        '',
        'Deliveries to the sink crm have gone dead',
        '',
        'Rule: dead_delivery',
        'About: crm',
        'Opened: 2026-11-21T10:00:00.000Z',
        'Counts: dead 3',
        `Incident: ${OPENED.incident.id}`,
        '',
        'Dashboard: https://calls.example.in/ui/incidents',
      ].join('\n'),
    );
    expect(resolved!.headers.get('subject')).toBe('[callhook] Incident resolved: dead_delivery (crm)');
    expect(resolved!.body).toContain('Resolved: 2026-11-21T11:05:03.000Z\nLasted: 1h 5m 3s\nCounts: dead 4, retried 4');
  });

  it('fails permanently, and says so, when the password is wrong', async () => {
    const server = await smtp();
    const channel = open({
      smtp_url: urlOf(server, 'wrong-password'),
      from: 'alerts@example.in',
      to: ['ops@example.in'],
    });
    const err = await failure(channel.send(testMessage(), { signal }));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toMatch(/^SMTP: Invalid login: 535 .*Invalid username or password/);
    expect(err.message).not.toContain('wrong-password');
    expect(server.refusedLogins).toEqual(['alerts@example.in']);
    expect(server.mails).toEqual([]);
  });

  it('fails retryably when no SMTP server answers', async () => {
    const channel = open({
      smtp_url: `smtp://u:p@127.0.0.1:${await closedPort()}`,
      from: 'alerts@example.in',
      to: ['ops@example.in'],
    });
    const err = await failure(channel.send(testMessage(), { signal }));
    expect(err).toBeInstanceOf(RetryableError);
    expect(err.message).toMatch(/^SMTP: .*ECONNREFUSED/);
  });

  it('stops when the signal aborts, with its reason', async () => {
    const server = await smtp();
    const channel = open({ smtp_url: urlOf(server), from: 'alerts@example.in', to: ['ops@example.in'] });
    const controller = new AbortController();
    const reason = new Error('shutting down');
    controller.abort(reason);
    expect(await failure(channel.send(testMessage(), { signal: controller.signal }))).toBe(reason);
  });

  it('takes TLS and AUTH from the URL: smtps is TLS at once on 465, smtp upgrades on 587, user info is AUTH', () => {
    expect(transportOptions('smtps://me%40x.in:p%40ss@smtp.x.in')).toMatchObject({
      host: 'smtp.x.in',
      port: 465,
      secure: true,
      auth: { user: 'me@x.in', pass: 'p@ss' },
    });
    const plain = transportOptions('smtp://relay.internal:2525');
    expect(plain).toMatchObject({ host: 'relay.internal', port: 2525, secure: false });
    expect(plain).not.toHaveProperty('auth');
    expect(transportOptions('smtp://smtp.x.in')).toMatchObject({ port: 587, secure: false });
  });
});
