import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakePagerDuty, startFakePagerDuty } from './fakes/pagerduty.js';
import { type FakeSlack, SLACK_WEBHOOK_PATH, startFakeSlack } from './fakes/slack.js';
import { type FakeSmtp, startFakeSmtp } from './fakes/smtp.js';
import { runCallhook } from './helpers/cli.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { closedPort, tempDir } from './helpers/server.js';

/**
 * `callhook alerts test` (docs/reference.md#alerts) run in-process against local stand-ins of Slack and PagerDuty, a
 * real SMTP server and an HTTP receiver: one line per channel, exit 1 when one did not go, 2 on a bad config; and no
 * channel secret in anything it, `config check` or the log channel prints.
 */

const SIGNING = `whsec_${Buffer.from('alerts-test-signing-bytes-0123').toString('base64')}`;
const HOOK_TOKEN = 'hook-bearer-token-7c1e9a';

let slack: FakeSlack;
let pagerduty: FakePagerDuty;
let smtp: FakeSmtp;
let receiver: Receiver;
beforeAll(async () => {
  [slack, pagerduty, smtp, receiver] = await Promise.all([
    startFakeSlack(),
    startFakePagerDuty(),
    startFakeSmtp(),
    startReceiver((_req, res) => res.writeHead(204).end()),
  ]);
});
afterAll(async () => {
  await Promise.all([slack.close(), pagerduty.close(), smtp.close(), receiver.close()]);
});

const smtpUrl = (password = smtp.password) =>
  `smtp://${encodeURIComponent(smtp.user)}:${encodeURIComponent(password)}@127.0.0.1:${smtp.port}`;

/** A config file of these lines, and the env that runs callhook on it. */
function configOf(lines: string[], env: Record<string, string> = {}) {
  const dir = tempDir();
  const path = join(dir, 'callhook.yaml');
  writeFileSync(path, lines.join('\n'));
  return { CALLHOOK_CONFIG: path, CALLHOOK_DATA_DIR: dir, ...env };
}

function everyChannel() {
  return configOf(
    [
      'public_url: https://calls.example.in',
      'alerts:',
      '  channels:',
      '    - { name: ops-log, type: log }',
      '    - { name: ops, type: slack, webhook_url: "${SLACK_URL}" }',
      `    - { name: hook, type: http, url: "${receiver.url}/alerts", headers: { Authorization: "Bearer \${HOOK_TOKEN}" }, signing: { secret: "\${SIGNING}" } }`,
      '    - { name: mail, type: email, smtp_url: "${SMTP_URL}", from: "callhook <alerts@example.in>", to: [ops@example.in] }',
      `    - { name: pager, type: pagerduty, routing_key: "\${PD_KEY}", api_url: "${pagerduty.url}" }`,
    ],
    { SLACK_URL: slack.url, HOOK_TOKEN, SIGNING, SMTP_URL: smtpUrl(), PD_KEY: pagerduty.routingKey },
  );
}

describe('callhook alerts test', () => {
  it('sends one test message through each channel and says each went', async () => {
    const env = everyChannel();
    const before = { slack: slack.messages.length, mails: smtp.mails.length, events: pagerduty.events.length };
    const run = await runCallhook(['alerts', 'test'], { ...env, LOG_LEVEL: 'info' });
    expect(run.stdout.split('\n')).toEqual([
      'ops-log (log): sent',
      'ops (slack): sent',
      'hook (http): sent',
      'mail (email): sent',
      'pager (pagerduty): sent',
      '',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // The log channel's line goes to stderr, at info.
    expect(JSON.parse(run.stderr.trim())).toMatchObject({ level: 30, channel: 'ops-log', alert: 'test' });
    expect(slack.messages.length - before.slack).toBe(1);
    expect(smtp.mails.at(-1)!.headers.get('subject')).toBe('[callhook] callhook alert test');
    expect(smtp.mails.length - before.mails).toBe(1);
    expect(pagerduty.events.slice(before.events).map((e) => e.event_action)).toEqual(['trigger', 'resolve']);
    const posted = receiver.received.at(-1)!;
    const body = new Webhook(SIGNING).verify(posted.body, posted.headers as Record<string, string>) as {
      type: string;
      incident: { rule: string; url: string };
    };
    expect(body).toMatchObject({ type: 'incident.test', incident: { rule: 'test' } });
    expect(body.incident.url).toBe('https://calls.example.in/ui/incidents');
    expect(posted.headers.authorization).toBe(`Bearer ${HOOK_TOKEN}`);
  });

  it('sends through the one channel --channel names', async () => {
    const env = everyChannel();
    const mails = smtp.mails.length;
    const run = await runCallhook(['alerts', 'test', '--channel', 'mail'], env);
    expect(run).toMatchObject({ code: 0, stdout: 'mail (email): sent\n' });
    expect(smtp.mails.length).toBe(mails + 1);
    const unknown = await runCallhook(['alerts', 'test', '--channel', 'sms'], env);
    expect(unknown).toMatchObject({
      code: 2,
      stderr: 'callhook: no alert channel is named sms (channels: ops-log, ops, hook, mail, pager)\n',
    });
  });

  it('says why a channel did not go, secrets masked, and exits 1', async () => {
    const down = `http://127.0.0.1:${await closedPort()}/alerts`;
    const env = configOf(
      [
        'alerts:',
        '  channels:',
        '    - { name: ops, type: slack, webhook_url: "${SLACK_URL}" }',
        '    - { name: mail, type: email, smtp_url: "${SMTP_URL}", from: alerts@example.in, to: [ops@example.in] }',
        `    - { name: hook, type: http, url: "${down}" }`,
        `    - { name: pager, type: pagerduty, routing_key: wrong-routing-key-0123, api_url: "${pagerduty.url}" }`,
      ],
      { SLACK_URL: slack.url, SMTP_URL: smtpUrl('wrong-smtp-password') },
    );
    slack.fail(429, 'rate_limited', { headers: { 'retry-after': '30' } });
    const run = await runCallhook(['alerts', 'test'], env);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('ops (slack): not sent: HTTP 429: rate_limited');
    expect(lines[1]).toMatch(/^mail \(email\): not sent: SMTP: Invalid login: 535 /);
    expect(lines[2]).toMatch(/^hook \(http\): not sent: network error: .*ECONNREFUSED/);
    expect(lines[3]).toMatch(/^pager \(pagerduty\): not sent: HTTP 400: .*Invalid routing key/);
    expect(run.stdout).not.toContain('wrong-smtp-password');
    expect(run.stdout).not.toContain('wrong-routing-key-0123');
  });

  it('stops on a bad config with the line that names the key, and exit 2', async () => {
    const refused = async (lines: string[]) => {
      const run = await runCallhook(['alerts', 'test'], configOf(lines));
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      return run.stderr.replace(/^callhook: (config file \S+: )?/, '').trimEnd();
    };
    expect(await refused(['alerts: { channels: [ { name: a, type: sms } ] }'])).toBe(
      'alerts.channels[0].type: unknown channel type "sms" (types: log, slack, http, email, pagerduty)',
    );
    expect(await refused(['alerts: { channels: [ { name: a, type: pagerduty } ] }'])).toMatch(
      /^alerts\.channels\[0\]\.routing_key: /,
    );
    expect(await refused(['alerts: { channels: [ { name: a, type: log }, { name: a, type: log } ] }'])).toBe(
      'alerts.channels[1].name: "a" names two channels',
    );
    expect(await refused(['alerts: { rules: { held_waiting: { older_than: a while } } }'])).toMatch(
      /^alerts\.rules\.held_waiting\.older_than: "a while" is not a duration/,
    );
    expect(await refused(['alerts: { rules: { no_calls: { active_hours: "9-5" } } }'])).toMatch(
      /^alerts\.rules\.no_calls\.active_hours: "9-5" is not HH:MM-HH:MM/,
    );
    expect(
      await refused(['sinks: [ { name: crm, type: crm9 } ]', 'alerts: { channels: [ { name: a, type: log } ] }']),
    ).toMatch(/^sinks\[0\]\.type: unknown sink type "crm9"/);
    expect(await refused(['alerts: { channels: [] }'])).toBe(
      'no alert channels are configured (alerts.channels in the config)',
    );
  });
});

describe('alert channel secrets', () => {
  it('appear in no output of alerts test, config check or the log channel, even echoed back in errors', async () => {
    const SLACK_SECRET = SLACK_WEBHOOK_PATH.split('/').at(-1)!;
    const PD_KEY = 'pd-routing-key-secret-4b2e';
    const SMTP_PASSWORD = 'smtp-secret-pa55-9d3f';
    // Receivers that quote back what they were sent, as some services do in their errors.
    const echo = await startReceiver((req, res) =>
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end(`refused ${req.url} ${req.headers.authorization} ${req.body}`),
    );
    try {
      const env = configOf(
        [
          'alerts:',
          '  channels:',
          '    - { name: ops-log, type: log }',
          `    - { name: ops, type: slack, webhook_url: "${echo.url}${SLACK_WEBHOOK_PATH}" }`,
          `    - { name: hook, type: http, url: "${echo.url}/in", headers: { X-Api-Key: "\${HOOK_TOKEN}" }, signing: { secret: "${SIGNING}" } }`,
          '    - { name: mail, type: email, smtp_url: "${SMTP_URL}", from: alerts@example.in, to: [ops@example.in] }',
          `    - { name: pager, type: pagerduty, routing_key: "${PD_KEY}", api_url: "${echo.url}" }`,
        ],
        { HOOK_TOKEN, SMTP_URL: smtpUrl(SMTP_PASSWORD), LOG_LEVEL: 'trace' },
      );
      const test = await runCallhook(['alerts', 'test'], env);
      expect(test.code).toBe(1);
      expect(test.stdout).toContain('pager (pagerduty): not sent: HTTP 400: refused /v2/enqueue');
      expect(test.stderr).toContain('"channel":"ops-log"');
      const check = await runCallhook(['config', 'check'], env);
      expect(check.code, check.stderr).toBe(0);
      expect(JSON.parse(check.stdout).alerts.channels.map((c: { name: string }) => c.name)).toEqual([
        'ops-log',
        'ops',
        'hook',
        'mail',
        'pager',
      ]);
      const everything = [test.stdout, test.stderr, check.stdout, check.stderr].join('\n');
      for (const secret of [SLACK_SECRET, PD_KEY, SMTP_PASSWORD, HOOK_TOKEN, SIGNING])
        expect(everything.includes(secret), secret).toBe(false);
    } finally {
      await echo.close();
    }
  });
});
