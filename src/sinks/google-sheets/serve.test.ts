import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../../../test/fakes/google-sheets.js';
import {
  ADMIN,
  adminApi,
  post,
  sampleCall,
  spawnServer,
  startServer,
  type TestServer,
  tempDir,
  until,
} from '../../../test/helpers/server.js';

/**
 * The google-sheets sink end to end, in a running serve against the local fake of Google
 * (docs/reference.md#what-every-sink-shares and 10): a 429 pauses the whole sink for its Retry-After, a disabled
 * account ends the delivery dead in Google's words, bad options stop start-up naming the key, and the service account's
 * private key is in no log line, attempt or admin reply, even when Google's reply quotes it.
 */

function serviceAccount(clientEmail: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = JSON.stringify({
    type: 'service_account',
    project_id: 'acme-calls',
    private_key_id: 'k1',
    private_key: pem,
    client_email: clientEmail,
  });
  /** The lines of the key's body: none of them may be seen anywhere. */
  const body = pem.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return { clientEmail, publicKey, pem, key, body };
}

type Attempt = {
  sink: string;
  attempt: number;
  outcome: string;
  httpStatus: number | null;
  error: string | null;
  note: string | null;
};
type Delivery = { sink: string; state: string; attempts: number; call_id?: string };

let google: FakeGoogle;
const servers: TestServer[] = [];
beforeAll(async () => {
  google = await startFakeGoogle();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await google?.close();
});
const sinkConfig = (account: { key: string }, spreadsheet: string, more: Record<string, unknown> = {}) => ({
  name: 'sheet',
  type: 'google-sheets',
  credentials: account.key,
  spreadsheet_id: spreadsheet,
  token_url: google.tokenUrl,
  api_url: google.url,
  ...more,
});
const serve = async (config: unknown) => {
  const server = await startServer({ config });
  servers.push(server);
  return server;
};
const deliveriesOf = async (server: TestServer) =>
  (await adminApi<{ deliveries: Delivery[] }>(server, '/deliveries?sink=sheet&limit=100')).body.deliveries;

describe('google-sheets in a running serve', () => {
  it("pauses the whole sink for a 429's Retry-After: one attempt recorded with 429, the others spend none, then every call is one row", async () => {
    const account = serviceAccount('writer@acme-calls.iam.gserviceaccount.com');
    google.trust(account);
    google.spreadsheet('paused', { sharedWith: [account.clientEmail] });
    google.failNext('rate-limit', { on: 'append', retryAfter: '2' });
    const server = await serve({ sinks: [sinkConfig(account, 'paused')] });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await (await post(server.url, sampleCall())).json()).id);

    await until(async () => (await deliveriesOf(server)).filter((d) => d.state === 'done').length === 4, {
      timeoutMs: 20_000,
    });
    const limited = google.requests.find((r) => r.endpoint === 'append')!;
    const after = google.requests.filter((r) => r.at > limited.at);
    expect(after.length).toBeGreaterThan(0);
    // Nothing was asked of Google until the 2 s it gave had passed (the back-off step would have been 30 s).
    expect(after.every((r) => r.at >= limited.at + 2000)).toBe(true);
    expect((await deliveriesOf(server)).map((d) => d.attempts).sort()).toEqual([1, 1, 1, 2]);
    const attempts = (
      await Promise.all(
        ids.map(async (id) => (await adminApi<{ attempts: Attempt[] }>(server, `/calls/${id}`)).body.attempts),
      )
    ).flat();
    const refused = attempts.filter((a) => a.outcome !== 'ok');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      httpStatus: 429,
      error: expect.stringMatching(/^Google Sheets quota: RESOURCE_EXHAUSTED Quota exceeded/),
    });

    const rows = google.cells('paused', 'Sheet1');
    // The default columns: the id, the received time, the hook, then the default hook's declared parameters.
    expect(rows[0]!.slice(0, 4)).toEqual(['callhook_id', 'received_at', 'hook', expect.any(String)]);
    expect(rows[0]).toContain('phone_number');
    expect(
      rows
        .slice(1)
        .map((row) => row[0])
        .sort(),
    ).toEqual([...ids].sort());
    expect(rows[1]![rows[0]!.indexOf('phone_number')]).toBe('+919812345678');
  });

  it("ends the delivery dead at once, in Google's words, when the service account is disabled; the key is in no admin reply", async () => {
    const account = serviceAccount('disabled@acme-calls.iam.gserviceaccount.com');
    google.trust(account);
    google.disable(account.clientEmail);
    google.spreadsheet('disabled', { sharedWith: [account.clientEmail] });
    const server = await serve({ sinks: [sinkConfig(account, 'disabled')] });
    const { id } = await (await post(server.url, sampleCall())).json();
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    const detail = await adminApi<{ attempts: Attempt[]; deliveries: Delivery[] }>(server, `/calls/${id}`);
    expect(detail.body.attempts).toMatchObject([
      {
        sink: 'sheet',
        attempt: 1,
        outcome: 'dead',
        httpStatus: 400,
        error:
          'Google refused a token for the service account disabled@acme-calls.iam.gserviceaccount.com: invalid_grant: Invalid grant: account not found',
      },
    ]);
    expect(detail.body.deliveries).toMatchObject([{ sink: 'sheet', state: 'dead', attempts: 1 }]);
    expect(google.cells('disabled', 'Sheet1')).toEqual([]);
    const replies = [
      JSON.stringify(detail.body),
      JSON.stringify((await adminApi(server, '/deliveries?state=dead')).body),
      JSON.stringify((await adminApi(server, '/sinks')).body),
    ];
    for (const line of account.body) expect(replies.join('\n')).not.toContain(line);
  });

  it("masks the access token it fetched when Google's error quotes it: in the attempt and every admin reply", async () => {
    const account = serviceAccount('quoted@acme-calls.iam.gserviceaccount.com');
    google.trust(account);
    google.spreadsheet('quoted', { sharedWith: [account.clientEmail] });
    const server = await serve({ sinks: [sinkConfig(account, 'quoted')] });
    google.failNext('quote-token', { on: 'read' });
    const { id } = await (await post(server.url, sampleCall())).json();
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    const token = google.requests
      .find((r) => r.authorization?.startsWith('Bearer '))!
      .authorization!.slice('Bearer '.length);
    expect(token.length).toBeGreaterThan(10);
    const detail = await adminApi<{ attempts: Attempt[] }>(server, `/calls/${id}`);
    expect(detail.body.attempts[0]!.error).toContain('Request with Bearer *** refused');
    const replies = [
      JSON.stringify(detail.body),
      JSON.stringify((await adminApi(server, '/deliveries?state=dead')).body),
      JSON.stringify((await adminApi(server, '/sinks')).body),
    ];
    expect(replies.join('\n')).not.toContain(token);
  });

  it('stops start-up naming the option when the key, a column or the spreadsheet id is wrong', async () => {
    const account = serviceAccount('options@acme-calls.iam.gserviceaccount.com');
    await expect(
      startServer({ config: { sinks: [sinkConfig(account, 'x', { credentials: join(tempDir(), 'missing.json') })] } }),
    ).rejects.toThrow(
      "sinks[0] (sheet).credentials: cannot read the key file (ENOENT); give the path of the service account's JSON key, or its JSON text",
    );
    await expect(
      startServer({ config: { sinks: [sinkConfig(account, 'x', { credentials: undefined })] } }),
    ).rejects.toThrow(/^sinks\[0\] \(sheet\)\.credentials: /);
    await expect(
      startServer({ config: { sinks: [sinkConfig(account, 'x', { columns: { Phone: '{{ caller.phone }}' } })] } }),
    ).rejects.toThrow(/^sinks\[0\] \(sheet\)\.columns\.Phone: \{\{ caller\.phone \}\}: unknown root "caller"/);
    await expect(
      startServer({ config: { sinks: [sinkConfig(account, 'https://docs.google.com/spreadsheets/d/abc/edit')] } }),
    ).rejects.toThrow(/^sinks\[0\] \(sheet\)\.spreadsheet_id: /);
  });

  it("shows the private key read from a key file in no log line, attempt or admin reply, even when Google's error quotes it", {
    timeout: 60_000,
  }, async () => {
    const account = serviceAccount('echoed@acme-calls.iam.gserviceaccount.com');
    google.trust(account);
    // A token endpoint that, as a broken proxy might, quotes the key it should never have seen.
    google.disable(account.clientEmail, `Invalid grant: the key ${account.pem} is not known`);
    const dataDir = tempDir();
    const keyFile = join(dataDir, 'service-account.json');
    writeFileSync(keyFile, account.key, { mode: 0o600 });
    const config = join(dataDir, 'callhook.json');
    writeFileSync(
      config,
      JSON.stringify({
        sinks: [
          { ...sinkConfig(account, 'echoed'), credentials: keyFile },
          { name: 'log', type: 'log' },
        ],
      }),
    );
    const server = await spawnServer(dataDir, { CALLHOOK_CONFIG: config, LOG_LEVEL: 'trace' });
    const outputs: string[] = [];
    try {
      const { id } = await (await post(server.url, sampleCall())).json();
      const admin = (path: string) =>
        fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.text());
      await until(async () => JSON.parse(await admin(`/deliveries?call=${id}&state=dead`)).deliveries.length === 1, {
        timeoutMs: 20_000,
      });
      const detail = JSON.parse(await admin(`/calls/${id}`));
      // The quoted key was kept in the attempt's error, masked, not dropped.
      expect(detail.attempts.find((a: Attempt) => a.sink === 'sheet').error).toMatch(
        /^Google refused a token for the service account echoed@acme-calls\.iam\.gserviceaccount\.com: invalid_grant: Invalid grant: the key \*\*\*/,
      );
      outputs.push(
        await admin(`/calls/${id}`),
        await admin('/calls'),
        await admin('/deliveries'),
        await admin('/sinks'),
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    outputs.push(server.output());
    const everything = outputs.join('\n');
    // The log at trace level did carry the failed attempt.
    expect(server.output()).toContain('invalid_grant');
    for (const line of account.body) expect(everything).not.toContain(line);
  });
});
