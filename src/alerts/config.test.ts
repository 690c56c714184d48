import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/server.js';
import { ConfigError, loadConfig } from '../config.js';

const SIGNING = `whsec_${Buffer.from('alert-signing-bytes-0123456789').toString('base64')}`;

const load = (yaml: string, env: Record<string, string> = {}) => {
  const path = join(tempDir(), 'callhook.yaml');
  writeFileSync(path, yaml);
  return loadConfig(env, path);
};
/** The one line a bad config stops start-up with, after the file's name. */
const refusal = (yaml: string) => {
  try {
    load(yaml);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message.replace(/^config file \S+: /, '');
  }
  return expect.fail('the config was accepted');
};

describe('alerts in the config', () => {
  it('has no channels, every rule but no_calls on with its defaults, and no public_url by default', () => {
    const config = loadConfig({});
    expect(config.publicUrl).toBeUndefined();
    expect(config.alerts.channels).toEqual([]);
    expect(config.alerts.rules).toEqual({
      dead_delivery: { quiet: 15 * 60_000 },
      sink_backlog: { older_than: 15 * 60_000 },
      store_outage: {},
      auth_failures: { max: 20, per: 5 * 60_000, after_success: 24 * 3_600_000, quiet: 15 * 60_000 },
      no_calls: false,
      problem_rate: { window: 3_600_000, min_calls: 20, ratio: 0.5 },
      held_waiting: { older_than: 24 * 3_600_000 },
      lost_calls: {},
    });
  });

  it('reads every channel type with its options and defaults, and each rule set, on or off', () => {
    const config = load(`
public_url: https://calls.example.in/
hooks: { leads: {} }
alerts:
  channels:
    - { name: ops-log, type: log }
    - { name: ops, type: slack, webhook_url: "https://hooks.slack.com/services/T0/B0/x", retry: { attempts: 3 } }
    - { name: hook, type: http, url: "https://alerts.example.in/in", headers: { X-Team: ops }, signing: { secret: "${SIGNING}" } }
    - { name: mail, type: email, smtp_url: "smtps://ops%40example.in:p%40ss@smtp.example.in", from: "callhook <ops@example.in>", to: [a@example.in, b@example.in] }
    - { name: pager, type: pagerduty, routing_key: R0123456789abcdef0123456789abcdef }
  rules:
    dead_delivery: { quiet: 30m }
    sink_backlog: false
    no_calls: { hooks: [leads], quiet_for: 90m, active_hours: "21:00-06:00" }
    problem_rate: true
`);
    expect(config.publicUrl).toBe('https://calls.example.in');
    expect(config.alerts.channels.map((c) => [c.name, c.type])).toEqual([
      ['ops-log', 'log'],
      ['ops', 'slack'],
      ['hook', 'http'],
      ['mail', 'email'],
      ['pager', 'pagerduty'],
    ]);
    expect(config.alerts.channels[1]!.retry).toEqual({ attempts: 3, jitter: 0.2 });
    expect(config.alerts.channels[2]!.options).toEqual({
      url: 'https://alerts.example.in/in',
      headers: { 'X-Team': 'ops' },
      signing: { secret: SIGNING },
    });
    expect(config.alerts.channels[4]!.options).toEqual({
      routing_key: 'R0123456789abcdef0123456789abcdef',
      api_url: 'https://events.pagerduty.com',
    });
    const { rules } = config.alerts;
    expect(rules.dead_delivery).toEqual({ quiet: 30 * 60_000 });
    expect(rules.sink_backlog).toBe(false);
    expect(rules.no_calls).toEqual({
      hooks: ['leads'],
      quiet_for: 90 * 60_000,
      active_hours: { text: '21:00-06:00', from: 21 * 60, to: 6 * 60 },
    });
    expect(rules.problem_rate).toEqual({ window: 3_600_000, min_calls: 20, ratio: 0.5 });
  });

  it('stops with one line naming the key for each mistake', () => {
    const channel = (entry: string) => `alerts: { channels: [ ${entry} ] }`;
    expect(refusal(channel('{ name: a, type: sms }'))).toBe(
      'alerts.channels[0].type: unknown channel type "sms" (types: log, slack, http, email, pagerduty)',
    );
    expect(refusal(channel('{ name: a, type: slack }'))).toMatch(/^alerts\.channels\[0\]\.webhook_url: /);
    expect(refusal(channel('{ name: a, type: pagerduty }'))).toMatch(/^alerts\.channels\[0\]\.routing_key: /);
    expect(refusal(channel('{ name: a, type: email, smtp_url: "smtp://h", to: [x@y.in] }'))).toBe(
      'alerts.channels[0].from: from must be an e-mail address',
    );
    expect(refusal(channel('{ name: a, type: email, smtp_url: "http://h", from: x@y.in, to: [x@y.in] }'))).toBe(
      'alerts.channels[0].smtp_url: smtp_url must be smtp://user:password@host:587 or smtps://user:password@host:465',
    );
    expect(refusal(channel('{ name: a, type: email, smtp_url: "smtp://h", from: x@y.in, to: [] }'))).toBe(
      'alerts.channels[0].to: to must list at least one address',
    );
    expect(refusal(channel('{ name: a, type: http, url: "https://x.in", signing: { secret: nope } }'))).toMatch(
      /^alerts\.channels\[0\]\.signing\.secret: signing\.secret must be "whsec_"/,
    );
    expect(refusal(channel('{ name: a, type: log, level: warn }'))).toBe('alerts.channels[0].level: unknown option');
    expect(refusal(channel('{ type: log }'))).toBe('alerts.channels[0].name: name is required');
    expect(refusal(channel('{ name: a, type: log, retry: { schedule: [soon] } }'))).toMatch(
      /^alerts\.channels\[0\]\.retry\.schedule\[0\]: "soon" is not a duration/,
    );
    expect(refusal(channel('{ name: ops, type: log }, { name: ops, type: log }'))).toBe(
      'alerts.channels[1].name: "ops" names two channels',
    );
    expect(refusal('alerts: { rules: { dead_delivery: { quiet: 15mins } } }')).toMatch(
      /^alerts\.rules\.dead_delivery\.quiet: "15mins" is not a duration/,
    );
    expect(refusal('alerts: { rules: { no_calls: { active_hours: "9am-9pm" } } }')).toMatch(
      /^alerts\.rules\.no_calls\.active_hours: "9am-9pm" is not HH:MM-HH:MM/,
    );
    expect(refusal('alerts: { rules: { calls_dropped: true } }')).toBe(
      'alerts.rules.calls_dropped: unknown rule (rules: dead_delivery, sink_backlog, store_outage, auth_failures, no_calls, problem_rate, held_waiting, lost_calls)',
    );
    expect(refusal('alerts: { rules: { auth_failures: { limit: 5 } } }')).toBe(
      'alerts.rules.auth_failures.limit: unknown option',
    );
    expect(refusal('alerts: { rules: { no_calls: { hooks: [sales] } } }')).toBe(
      'alerts.rules.no_calls.hooks: no hook is named "sales" (hooks: end-of-call)',
    );
    expect(refusal('public_url: calls.example.in')).toBe(
      'public_url: public_url must be the http:// or https:// address of the dashboard',
    );
  });
});
