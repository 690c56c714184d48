import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { runCallhook } from './helpers/cli.js';
import { freshDatabase } from './helpers/database.js';
import { startReceiver } from './helpers/receiver.js';
import { closedPort, post, readStoreFile, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

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
    const crm = await startReceiver((req, res) =>
      res.writeHead(500).end(`rejected ${req.headers.authorization} sig=${req.headers['webhook-signature']}`),
    );
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
      await fetch(`${server.url}/webhooks/end-of-call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: '{broken',
      });
      await fetch(`${server.url}/admin/calls`, { headers: { authorization: `Bearer ${API_KEY}` } });
      const admin = (path: string) =>
        fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) =>
          r.text(),
        );
      // Wait until both attempts at the CRM and the Slack attempt have failed and been recorded.
      await until(async () => JSON.parse(await admin(`/deliveries?call=${id}&state=dead`)).deliveries.length === 2, {
        timeoutMs: 20_000,
      });
      outputs.push(
        await admin('/calls'),
        await admin(`/calls/${id}`),
        await admin('/deliveries'),
        await admin('/openapi.json'),
      );
      outputs.push(
        await (await fetch(`${server.url}/metrics`)).text(),
        await (await fetch(`${server.url}/readyz`)).text(),
      );
      const detail = JSON.parse(await admin(`/calls/${id}`));
      // The receivers did see the secrets, and the echoed error text was recorded: masked, not dropped.
      expect(crm.received[0]!.headers.authorization).toBe(`Bearer ${CRM_TOKEN}`);
      expect(detail.attempts.find((a: { sink: string }) => a.sink === 'crm').error).toMatch(
        /^HTTP 500: rejected \*\*\* sig=/,
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await crm.close();
      await slack.close();
    }
    outputs.push(server.output());
    const cli = await runCallhook(['config', 'check'], { ...env, CALLHOOK_DATA_DIR: dataDir });
    outputs.push(cli.stdout, cli.stderr);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain('"crm"');

    const everything = outputs.join('\n');
    expect(everything.length).toBeGreaterThan(10_000);
    for (const secret of [
      API_KEY,
      ADMIN_TOKEN,
      CRM_TOKEN,
      SIGNING,
      SLACK_PATH,
      'secretslackpath9a8b7c',
      'wrong-key-0123456789abcdef',
    ]) {
      expect(everything.includes(secret), secret).toBe(false);
    }
  });

  it('appear in no spelling: URL-encoded, JSON-escaped, base64 in a Basic header, nor in the stored attempts', {
    timeout: 60_000,
  }, async () => {
    const LITERAL_KEY = 'literal-api-key-4c1e9b7a2d';
    const ACCESS = 'access tok/en+3f8a1c9e';
    const PATH_TOKEN = 'path-token-6d2b8e1f4a';
    const TENANT = 'tenant-from-env-9e3c7a';
    const METRICS = 'metrics-token-1a2b3c4d5e6f';
    const DB_PASSWORD = 'pg-query-password-8b4d2f';
    // A receiver that quotes everything it was sent, in every spelling an upstream error might use.
    const echo = await startReceiver((req, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: `bad request to ${req.url}`,
          decoded: decodeURIComponent(req.url),
          headers: req.headers,
          basic: `Basic ${Buffer.from(`api:${req.headers['x-api-key']}`).toString('base64')}`,
        }),
      ),
    );
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.yaml');
    writeFileSync(
      config,
      [
        'sinks:',
        `  - name: echo`,
        `    type: http`,
        `    url: "${echo.url}/in/\${PATH_TOKEN}/calls?access_token=\${ACCESS}&page=1"`,
        `    headers: { X-Api-Key: ${LITERAL_KEY}, X-Tenant: "\${TENANT}" }`,
      ].join('\n'),
    );
    const env = {
      CALLHOOK_CONFIG: config,
      CALLHOOK_API_KEYS: API_KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
      CALLHOOK_METRICS_TOKEN: METRICS,
      ACCESS,
      PATH_TOKEN,
      TENANT,
      LOG_LEVEL: 'trace',
    };
    const outputs: string[] = [];
    const server = await spawnServer(dataDir, env);
    let stored: string[] = [];
    try {
      const { id } = await (await post(server.url, sampleCall(), { key: API_KEY })).json();
      const admin = (path: string) =>
        fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) =>
          r.text(),
        );
      await until(async () => JSON.parse(await admin(`/deliveries?call=${id}&state=dead`)).deliveries.length === 1, {
        timeoutMs: 20_000,
      });
      outputs.push(await admin(`/calls/${id}`), await admin('/deliveries?state=dead'));
      // The receiver was sent the secrets, in the spellings it then quoted back.
      expect(echo.received[0]!.url).toContain(encodeURIComponent(PATH_TOKEN));
      expect(echo.received[0]!.headers['x-tenant']).toBe(TENANT);
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      outputs.push(
        await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS}` } })).text(),
      );
      // Read straight from the database file, as a backup or a SQL query would.
      stored = readStoreFile(dataDir, (db) => [
        ...(db.prepare('SELECT error FROM attempts').all() as { error: string }[]).map((r) => r.error),
        ...(db.prepare('SELECT last_error FROM deliveries').all() as { last_error: string }[]).map((r) => r.last_error),
      ]);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      await echo.close();
    }
    expect(stored.length).toBe(2);
    for (const error of stored) expect(error).toMatch(/^HTTP 400: .*\*\*\*/);
    outputs.push(...stored, server.output());
    const databaseUrl = `postgres://callhook@127.0.0.1:${await closedPort()}/calls?password=${DB_PASSWORD}`;
    const cli = await runCallhook(['config', 'check'], {
      ...env,
      CALLHOOK_DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('"echo"');
    outputs.push(cli.stdout, cli.stderr);

    const everything = outputs.join('\n');
    const spellings = (secret: string) => [
      secret,
      encodeURIComponent(secret),
      JSON.stringify(secret).slice(1, -1),
      new URLSearchParams({ s: secret }).toString().slice(2),
    ];
    for (const secret of [LITERAL_KEY, ACCESS, PATH_TOKEN, TENANT, METRICS, DB_PASSWORD, API_KEY, ADMIN_TOKEN]) {
      for (const spelling of spellings(secret)) expect(everything.includes(spelling), spelling).toBe(false);
    }
    expect(everything.includes(Buffer.from(`api:${LITERAL_KEY}`).toString('base64')), 'Basic').toBe(false);
  });

  const postgres = serviceUrl('postgres');
  it.skipIf(!postgres)(
    "appear in no output of a serve on PostgreSQL: a sink URL's user-info password and DATABASE_URL's, nor in the stored attempts",
    { timeout: 60_000 },
    async () => {
      const SINK_PASSWORD = 'sink-userinfo-pw-5c7e1a';
      const DB_PASSWORD = 'db-userinfo-pw-3f9b2d';
      // PostgreSQL here trusts local connections, so the password is carried by the URL and never needed by the server.
      const db = await freshDatabase(postgres!, 'callhook_secrets');
      const databaseUrl = Object.assign(new URL(db.url), { username: 'postgres', password: DB_PASSWORD }).toString();
      // A receiver that quotes the Authorization header it was sent (the Basic of the URL's user info), decoded too.
      const echo = await startReceiver((req, res) => {
        const basic = (req.headers.authorization ?? '').replace(/^Basic /, '');
        res
          .writeHead(401, { 'content-type': 'text/plain' })
          .end(`denied ${req.headers.authorization} (${Buffer.from(basic, 'base64').toString()}) at ${req.url}`);
      });
      const dataDir = tempDir();
      const config = join(dataDir, 'callhook.yaml');
      const sinkUrl = echo.url.replace('http://', `http://ops:${SINK_PASSWORD}@`);
      writeFileSync(config, ['sinks:', `  - { name: echo, type: http, url: "${sinkUrl}/calls" }`].join('\n'));
      const env = {
        CALLHOOK_CONFIG: config,
        CALLHOOK_API_KEYS: API_KEY,
        CALLHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
        DATABASE_URL: databaseUrl,
        LOG_LEVEL: 'trace',
      };
      const outputs: string[] = [];
      const stored: string[] = [];
      const server = await spawnServer(dataDir, env);
      try {
        const { id } = await (await post(server.url, sampleCall(), { key: API_KEY })).json();
        const admin = (path: string) =>
          fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) =>
            r.text(),
          );
        await until(async () => JSON.parse(await admin(`/deliveries?call=${id}&state=dead`)).deliveries.length === 1, {
          timeoutMs: 20_000,
        });
        outputs.push(
          await admin(`/calls/${id}`),
          await admin('/deliveries?state=dead'),
          await admin('/sinks'),
          await admin('/calls'),
        );
        outputs.push(
          await (await fetch(`${server.url}/metrics`)).text(),
          await (await fetch(`${server.url}/readyz`)).text(),
        );
        // The receiver was sent the credentials, and quoted them back in the error that was recorded.
        expect(echo.received[0]!.headers.authorization).toBe(
          `Basic ${Buffer.from(`ops:${SINK_PASSWORD}`).toString('base64')}`,
        );
        expect(JSON.parse(await admin(`/calls/${id}`)).attempts[0].error).toMatch(
          /^HTTP 401: denied Basic \*\*\* \(ops:\*\*\*\) at \/calls/,
        );
        // Read straight from the database, as a backup or a SQL query would.
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          for (const sql of [
            'SELECT error AS text FROM attempts',
            'SELECT last_error AS text FROM deliveries',
            'SELECT last_error AS text FROM sink_state',
          ]) {
            stored.push(...(await client.query<{ text: string | null }>(sql)).rows.map((r) => r.text ?? ''));
          }
        } finally {
          await client.end();
        }
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
        await echo.close();
      }
      expect(stored.join('')).toContain('***');
      const cli = await runCallhook(['config', 'check'], { ...env, CALLHOOK_DATA_DIR: dataDir });
      expect(cli.code, cli.stderr).toBe(0);
      outputs.push(...stored, server.output(), cli.stdout, cli.stderr);
      await db.drop();

      const everything = outputs.join('\n');
      expect(everything).toContain(databaseUrl.replace(DB_PASSWORD, '***').replace(/\/[^/]*$/, ''));
      const basic = (user: string, password: string) => Buffer.from(`${user}:${password}`).toString('base64');
      for (const secret of [
        SINK_PASSWORD,
        DB_PASSWORD,
        basic('ops', SINK_PASSWORD),
        basic('postgres', DB_PASSWORD),
        API_KEY,
        ADMIN_TOKEN,
      ]) {
        expect(everything.includes(secret), secret).toBe(false);
      }
    },
  );
});
