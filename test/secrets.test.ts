import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callhook } from './helpers/cli.js';
import { startReceiver } from './helpers/receiver.js';
import { post, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';

/**
 * The webhook key, the admin token and every sink secret never appear in logs, metrics, admin replies, error
 * messages or the config check: everything the process and its commands print is gathered and searched.
 */

const API_KEY = 'secret-webhook-key-7f3a9c2e4b1d';
const ADMIN_TOKEN = 'secret-admin-token-5e8d1a6f3c90';
const CRM_TOKEN = 'secret-crm-token-2b7e9f4a1c6d';
const SIGNING = `whsec_${Buffer.from('secret-signing-bytes-0123456789abcdef').toString('base64')}`;
const SLACK_PATH = '/services/T000/B000/secretslackpath9a8b7c';

describe('secrets', () => {
  it('appear in no output, even when a receiver echoes them back in an error', { timeout: 60_000 }, async () => {
    // A CRM that refuses every call and, as real ones do, quotes the credentials it was given in its error body.
    const crm = await startReceiver((req, res) => res.writeHead(500).end(`rejected ${req.headers.authorization} sig=${req.headers['webhook-signature']}`));
    const slack = await startReceiver((_req, res) => res.writeHead(404).end('no_service'));
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.yaml');
    writeFileSync(
      config,
      [
        'sinks:',
        `  - { name: crm, type: http, url: "${crm.url}/calls", headers: { Authorization: "Bearer \${CRM_TOKEN}" }, signing: { secret: "\${SIGNING}" }, retry: { attempts: 2, schedule: [100ms] } }`,
        `  - { name: alerts, type: slack, webhook_url: "\${SLACK_URL}" }`,
      ].join('\n'),
    );
    const env = {
      CALLHOOK_CONFIG: config,
      CALLHOOK_API_KEYS: API_KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
      CRM_TOKEN,
      SIGNING,
      SLACK_URL: `${slack.url}${SLACK_PATH}`,
      LOG_LEVEL: 'trace',
    };
    const outputs: string[] = [];
    const server = await spawnServer(dataDir, env);
    try {
      const { id } = await (await post(server.url, sampleCall(), { key: API_KEY })).json();
      await post(server.url, sampleCall(), { key: 'wrong-key-0123456789abcdef' });
      await fetch(`${server.url}/webhooks/end-of-call`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: '{broken' });
      await fetch(`${server.url}/admin/calls`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const admin = (path: string) => fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.text());
      // Wait until both attempts at the CRM and the Slack attempt have failed and been recorded.
      await until(async () => JSON.parse(await admin(`/deliveries?call=${id}&state=dead`)).deliveries.length === 2, { timeoutMs: 20_000 });
      outputs.push(await admin('/calls'), await admin(`/calls/${id}`), await admin('/deliveries'), await admin('/openapi.json'));
      outputs.push(await (await fetch(`${server.url}/metrics`)).text(), await (await fetch(`${server.url}/readyz`)).text());
      const detail = JSON.parse(await admin(`/calls/${id}`));
      // The receivers did see the secrets, and the echoed error text was recorded: masked, not dropped.
      expect(crm.received[0]!.headers.authorization).toBe(`Bearer ${CRM_TOKEN}`);
      expect(detail.attempts.find((a: { sink: string }) => a.sink === 'crm').error).toMatch(/^HTTP 500: rejected \*\*\* sig=/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await crm.close();
      await slack.close();
    }
    outputs.push(server.output());
    const cli = await callhook(['config', 'check'], { ...env, CALLHOOK_DATA_DIR: dataDir });
    outputs.push(cli.stdout, cli.stderr);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('"crm"');

    const everything = outputs.join('\n');
    expect(everything.length).toBeGreaterThan(10_000);
    for (const secret of [API_KEY, ADMIN_TOKEN, CRM_TOKEN, SIGNING, SLACK_PATH, 'secretslackpath9a8b7c', 'wrong-key-0123456789abcdef']) {
      expect(everything.includes(secret), secret).toBe(false);
    }
  });
});
