import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeZohoCrm, startFakeZohoCrm } from '../../../test/fakes/zoho-crm.js';
import { adminApi, post, sampleCall, startServer, type TestServer, until } from '../../../test/helpers/server.js';

/**
 * The zoho-crm sink end to end, through a running serve against the fake Zoho (docs/reference.md#what-every-sink-shares
 * and docs/reference.md#crm-sinks): a 429 with Zoho's reset header pauses the whole sink for that long, and a revoked
 * refresh token ends the delivery dead with Zoho's words, no secret in any admin reply.
 */

type Delivery = { sink: string; state: string; attempts: number };
type Attempt = { outcome: string; httpStatus: number | null; error: string | null };
const deliveriesOf = async (server: TestServer) =>
  (await adminApi<{ deliveries: Delivery[] }>(server, '/deliveries?sink=crm&limit=500')).body.deliveries;

let zoho: FakeZohoCrm;
let server: TestServer | undefined;
beforeEach(async () => {
  zoho = await startFakeZohoCrm();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await zoho.close();
});
afterAll(() => server?.close());

/** A serve with the sink; the secrets come from the environment, as README tells users to write them. */
async function serve(over: Record<string, unknown> = {}): Promise<TestServer> {
  const sink = {
    name: 'crm',
    type: 'zoho-crm',
    client_id: zoho.clientId,
    client_secret: '${ZOHO_CLIENT_SECRET}',
    refresh_token: '${ZOHO_REFRESH_TOKEN}',
    token_url: zoho.tokenUrl,
    api_url: zoho.url,
    ...over,
  };
  server = await startServer({
    env: { ZOHO_CLIENT_SECRET: zoho.clientSecret, ZOHO_REFRESH_TOKEN: zoho.refreshToken },
    config: { sinks: [sink] },
  });
  return server;
}

describe('zoho-crm sink through serve', () => {
  it('pauses the whole sink for a 429 until X-RATELIMIT-RESET: one attempt recorded with 429, the others spend none, then all are delivered', async () => {
    const server = await serve({ concurrency: 1 });
    const body = {
      code: 'TOO_MANY_REQUESTS',
      details: {},
      message: 'The number of concurrent requests has exceeded the limit',
      status: 'error',
    };
    zoho.failNext(1, { status: 429, headers: (request) => ({ 'X-RATELIMIT-RESET': String(request.at + 5000) }), body });
    for (let i = 0; i < 3; i++)
      expect((await post(server.url, sampleCall({ email_address: `caller${i}@example.in` }))).status).toBe(200);
    await until(async () => (await deliveriesOf(server)).some((d) => d.attempts === 1 && d.state === 'pending'));
    const sink = (
      await adminApi<{ sinks: { name: string; rate_limited_until: string | null; last_error: string | null }[] }>(
        server,
        '/sinks',
      )
    ).body.sinks[0]!;
    expect(sink.rate_limited_until).not.toBeNull();
    expect(sink.last_error).toBe(
      'Zoho CRM POST /crm/v6/Contacts/upsert: HTTP 429 TOO_MANY_REQUESTS: The number of concurrent requests has exceeded the limit',
    );

    await until(async () => (await deliveriesOf(server)).every((d) => d.state === 'done'), { timeoutMs: 20_000 });
    // The default back-off would wait 30 s: the sink came back at Zoho's reset, and asked Zoho nothing before it.
    const api = zoho.requests.filter((r) => r.path.startsWith('/crm/'));
    const limitedAt = api[0]!.at;
    expect(api.slice(1).every((r) => r.at >= limitedAt + 5000 - 5)).toBe(true);
    expect((await deliveriesOf(server)).map((d) => d.attempts).sort()).toEqual([1, 1, 2]);
    expect(zoho.records.Contacts).toHaveLength(3);
    expect(zoho.notes).toHaveLength(3);

    const calls = (await adminApi<{ calls: { record: { id: string } }[] }>(server, '/calls?limit=10')).body.calls;
    const attempts = (
      await Promise.all(
        calls.map(
          async (c) => (await adminApi<{ attempts: Attempt[] }>(server, `/calls/${c.record.id}`)).body.attempts,
        ),
      )
    ).flat();
    expect(attempts.filter((a) => a.httpStatus === 429)).toEqual([expect.objectContaining({ outcome: 'retry' })]);
    expect(attempts.filter((a) => a.outcome === 'ok')).toHaveLength(3);
  });

  it("ends a delivery dead with Zoho's words when the refresh token is revoked, and shows no secret in any admin reply", async () => {
    zoho.revokeRefreshToken();
    const server = await serve();
    const accepted = (await (await post(server.url, sampleCall())).json()) as { id: string };
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    const call = await adminApi<{ attempts: Attempt[] }>(server, `/calls/${accepted.id}`);
    expect(call.body.attempts).toEqual([
      expect.objectContaining({
        outcome: 'dead',
        error: 'Zoho Accounts refused the access token request: invalid_code',
      }),
    ]);
    expect(zoho.tokenRequests()).toBe(1);

    const replies = await Promise.all(
      ['/sinks', '/deliveries?sink=crm', `/calls/${accepted.id}`, '/calls'].map(async (path) =>
        JSON.stringify((await adminApi(server, path)).body),
      ),
    );
    for (const text of replies) {
      for (const secret of [zoho.clientSecret, zoho.refreshToken, ...zoho.granted]) expect(text).not.toContain(secret);
    }
  });

  it('keeps the access token it was granted out of every admin reply', async () => {
    const server = await serve();
    // The token is no option: it is masked because the sink tells serve of it. A reply that echoes the request's
    // header puts it in the attempt's error.
    zoho.failNext(1, {
      status: 400,
      body: (request: { headers: { authorization?: string } }) => ({
        code: 'INVALID_DATA',
        message: `bad request with ${request.headers.authorization}`,
        details: {},
      }),
    });
    const accepted = (await (await post(server.url, sampleCall({ email_address: 'echo@example.in' }))).json()) as {
      id: string;
    };
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    expect(zoho.granted).toHaveLength(1);
    const text = JSON.stringify((await adminApi(server, `/calls/${accepted.id}`)).body);
    expect(text).toContain('INVALID_DATA: bad request with Zoho-oauthtoken ');
    expect(text).not.toContain(zoho.granted[0]);
  });

  it('does not start with a bad option, naming the sink and the key', async () => {
    // Undefined is left out of the config file written.
    await expect(serve({ refresh_token: undefined })).rejects.toThrow(
      'sinks[0] (crm).refresh_token: refresh_token is required',
    );
    await expect(serve({ map: { Title: '{{ nope.stage }}' } })).rejects.toThrow(
      /^sinks\[0\] \(crm\)\.map\.Title: \{\{ nope\.stage \}\}: unknown root "nope"/,
    );
    await expect(serve({ module: 'Deals' })).rejects.toThrow('sinks[0] (crm).module: module must be Contacts or Leads');
  });
});
