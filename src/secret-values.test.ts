import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { secretValues, urlSecrets } from './secret-values.js';
import { resolveConfiguredSinks } from './sinks/registry.js';

async function secretsOf(yaml: string, env: Record<string, string> = {}): Promise<string[]> {
  const path = join(mkdtempSync(join(tmpdir(), 'callhook-secret-values-')), 'callhook.yaml');
  writeFileSync(path, yaml);
  const config = loadConfig(env, path);
  return secretValues(config, await resolveConfiguredSinks(config));
}

describe('what counts as a secret (docs/reference.md#secrets)', () => {
  it("the alert channels' secrets, written out or filled in from the environment, and no other option of theirs", async () => {
    const signing = `whsec_${Buffer.from('channel-signing-bytes-01234567').toString('base64')}`;
    const secrets = await secretsOf(
      [
        'alerts:',
        '  channels:',
        '    - { name: ops, type: slack, webhook_url: "https://hooks.slack.com/services/T0/B0/slackpath0123" }',
        `    - { name: hook, type: http, url: "https://alerts.example.in/in", headers: { X-Api-Key: "\${HOOK_KEY}", X-Team: ops }, signing: { secret: "${signing}" } }`,
        '    - { name: mail, type: email, smtp_url: "smtp://ops:smtp-pass-0123@smtp.example.in:587", from: a@example.in, to: [b@example.in] }',
        '    - { name: pager, type: pagerduty, routing_key: "${PD_KEY}" }',
      ].join('\n'),
      { HOOK_KEY: 'hook-header-key-0123', PD_KEY: 'pd-routing-key-0123' },
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'https://hooks.slack.com/services/T0/B0/slackpath0123',
        'hook-header-key-0123',
        signing,
        'smtp://ops:smtp-pass-0123@smtp.example.in:587',
        'smtp-pass-0123',
        'pd-routing-key-0123',
      ]),
    );
    for (const shown of ['ops', 'https://alerts.example.in/in', 'a@example.in', 'b@example.in'])
      expect(secrets).not.toContain(shown);
  });

  it('every key and token callhook accepts', async () => {
    const secrets = await secretsOf(
      [
        'api_keys: [global-key-0123456789]',
        'admin_token: admin-token-0123456789',
        'metrics_token: metrics-token-0123456789',
        'hooks:',
        '  orders:',
        '    keys: [hook-key-0123456789]',
        'reconcile:',
        '  api_url: https://calls.example.com/api/v1',
        '  api_key: service-key-0123456789',
      ].join('\n'),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'global-key-0123456789',
        'admin-token-0123456789',
        'metrics-token-0123456789',
        'hook-key-0123456789',
        'service-key-0123456789',
      ]),
    );
  });

  it('the options a sink type declares secret, and options named like a credential in any sink', async () => {
    const secrets = await secretsOf(
      [
        'sinks:',
        '  - { name: alerts, type: slack, webhook_url: "https://hooks.slack.com/services/T0/B0/slackpath0123" }',
        '  - { name: tags, type: tag-contact, api_url: "https://calls.example.com/api/v1", api_key: tag-key-0123456789, tag_id: t1 }',
        `  - { name: crm, type: http, url: "https://crm.example.com/calls", signing: { secret: "whsec_${Buffer.alloc(24, 7).toString('base64')}" } }`,
      ].join('\n'),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'https://hooks.slack.com/services/T0/B0/slackpath0123',
        'tag-key-0123456789',
        `whsec_${Buffer.alloc(24, 7).toString('base64')}`,
      ]),
    );
    expect(secrets).not.toContain('https://crm.example.com/calls');
    expect(secrets).not.toContain('t1');
  });

  it("an option only its sink type declares secret, whose name says nothing: a nats `pass`, a module sink's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callhook-secret-values-'));
    writeFileSync(
      join(dir, 'sink.js'),
      'export const secretOptions = ["dsn"];\nexport default () => ({ async deliver() {} });\n',
    );
    const path = join(dir, 'callhook.yaml');
    writeFileSync(
      path,
      [
        'sinks:',
        '  - { name: bus, type: nats, user: callhook, pass: NatsPass4455 }',
        '  - { name: mine, type: module, module: ./sink.js, dsn: ModuleDsn7788, label: PlainLabel99 }',
      ].join('\n'),
    );
    const config = loadConfig({}, path);
    const secrets = secretValues(config, await resolveConfiguredSinks(config));
    expect(secrets).toEqual(expect.arrayContaining(['NatsPass4455', 'ModuleDsn7788']));
    expect(secrets).not.toContain('callhook');
    expect(secrets).not.toContain('PlainLabel99');
    // The same options without their types' declarations are not secret by name: the declarations decide.
    expect(secretValues(config, [])).not.toContain('NatsPass4455');
    expect(secretValues(config, [])).not.toContain('ModuleDsn7788');
  });

  it('credential headers by their name in any case, the credential after a scheme, and the password inside Basic', async () => {
    const basic = Buffer.from('user:basic-password-123').toString('base64');
    const secrets = await secretsOf(
      [
        'sinks:',
        '  - name: crm',
        '    type: http',
        '    url: https://crm.example.com/calls',
        '    headers:',
        '      X-Api-Key: header-key-0123456789',
        '      x-auth-token: auth-token-0123456789',
        '      Authorization: Bearer bearer-token-0123456789',
        '      X-Password: pass-word-0123',
        '      X-Tenant: tenant-visible',
        '  - { name: other, type: http, url: "https://b.example.com/", headers: { Proxy-Authorization: "Basic ' +
          basic +
          '" } }',
      ].join('\n'),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'header-key-0123456789',
        'auth-token-0123456789',
        'Bearer bearer-token-0123456789',
        'bearer-token-0123456789',
        'pass-word-0123',
        basic,
        'basic-password-123',
      ]),
    );
    expect(secrets).not.toContain('tenant-visible');
  });

  it('a value ${VAR} filled in: secret in a header or a URL, not in an option that says nothing', async () => {
    const secrets = await secretsOf(
      [
        'sinks:',
        '  - { name: crm, type: http, url: "https://crm.example.com/${CRM_PATH}/calls", headers: { X-Tenant: "${TENANT}" } }',
        '  - { name: alerts, type: slack, webhook_url: "https://hooks.slack.com/services/x", channel: "${CHANNEL}" }',
      ].join('\n'),
      { CRM_PATH: 'path-token-0123456789', TENANT: 'tenant-from-env', CHANNEL: '#calls-channel' },
    );
    expect(secrets).toEqual(expect.arrayContaining(['path-token-0123456789', 'tenant-from-env']));
    expect(secrets).not.toContain('#calls-channel');
  });

  it("the password of a URL's user info and token-like query parameters, DATABASE_URL's too", async () => {
    const secrets = await secretsOf(
      [
        'database_url: "postgres://app:db%40pass0123@db.example.com/calls?password=query-pass-0123&sslmode=require"',
        'sinks:',
        '  - { name: crm, type: http, url: "https://crm.example.com/calls?access_token=access-0123456789&sig=sig-0123456789&Signature=upper-sig-0123&page=visible-page" }',
      ].join('\n'),
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'db%40pass0123',
        'db@pass0123',
        'query-pass-0123',
        'access-0123456789',
        'sig-0123456789',
        'upper-sig-0123',
      ]),
    );
    expect(secrets).not.toContain('visible-page');
    expect(secrets).not.toContain('require');
  });

  it('reads the user info and query of a URL the WHATWG parser refuses but a driver takes', () => {
    expect(urlSecrets('postgres://postgres:DbPwNoHost11@/test?host=127.0.0.1')).toContain('DbPwNoHost11');
    expect(urlSecrets('postgres://app:MultiHostPw22@h1:5432,h2:5433/db?sslmode=require&password=QueryPw33')).toEqual(
      expect.arrayContaining(['MultiHostPw22', 'QueryPw33']),
    );
    expect(urlSecrets('postgres://app:Slash/Pw44@db.example.com/calls')).toContain('Slash/Pw44');
    // A port and an `@` in the path are no user info.
    expect(urlSecrets('https://h.example.com:8080/p@x')).toEqual([]);
  });

  it('leaves values too short to mask without masking common text', async () => {
    expect(urlSecrets('https://h/?token=abc')).toEqual(['abc', 'abc']);
    expect(await secretsOf('sinks:\n  - { name: crm, type: http, url: "https://h/?token=abc" }\n')).not.toContain(
      'abc',
    );
  });
});
