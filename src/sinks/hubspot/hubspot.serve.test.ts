import { afterAll, describe, expect, it } from 'vitest';
import { type FakeHubSpot, startFakeHubSpot } from '../../../test/fakes/hubspot.js';
import {
  ADMIN,
  adminApi,
  post,
  sampleCall,
  startServer,
  type TestServer,
  until,
} from '../../../test/helpers/server.js';
import type { SinkView } from '../../admin/sinks.js';

/**
 * The hubspot sink in a running serve against the local HubSpot (docs/reference.md#what-every-sink-shares and
 * docs/reference.md#crm-sinks): a 429 with HubSpot's rate-limit headers pauses the whole sink for the window they give;
 * a revoked token ends the delivery dead with HubSpot's words, the token in no admin reply; bad options stop start-up
 * naming the key.
 */

type Delivery = { sink: string; state: string; attempts: number };
type Attempt = {
  sink: string;
  attempt: number;
  outcome: string;
  httpStatus: number | null;
  error: string | null;
  note: string | null;
};

const servers: TestServer[] = [];
const fakes: FakeHubSpot[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

async function fakeHubSpot(options: Parameters<typeof startFakeHubSpot>[0] = {}): Promise<FakeHubSpot> {
  const fake = await startFakeHubSpot(options);
  fakes.push(fake);
  return fake;
}
async function serveWith(fake: FakeHubSpot, extra: Record<string, unknown> = {}): Promise<TestServer> {
  const server = await startServer({
    env: { HUBSPOT_TOKEN: fake.token },
    config: { sinks: [{ name: 'crm', type: 'hubspot', token: '${HUBSPOT_TOKEN}', api_url: fake.url, ...extra }] },
  });
  servers.push(server);
  return server;
}
const deliveriesOf = async (server: TestServer) =>
  (await adminApi<{ deliveries: Delivery[] }>(server, '/deliveries?sink=crm&limit=50')).body.deliveries;
const attemptsOf = async (server: TestServer, id: string) =>
  (await adminApi<{ attempts: Attempt[] }>(server, `/calls/${id}`)).body.attempts.filter((a) => a.sink === 'crm');
const RATE_LIMITED =
  /^HubSpot 429 RATE_LIMIT: You have reached your ten_secondly_rolling limit\. \(correlationId [0-9a-f-]{36}\)$/;

describe('hubspot sink in a running serve', () => {
  it('pauses the whole sink for a 429 as long as X-HubSpot-RateLimit-Interval-Milliseconds says: one attempt recorded with 429, the others spend none, then all are delivered', async () => {
    const fake = await fakeHubSpot({ rateLimitIntervalMs: 5_000 });
    fake.fail('rate-limit');
    const server = await serveWith(fake, { concurrency: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await (await post(server.url, sampleCall({ email_address: 'asha@example.in' }))).json()).id);

    await until(async () => (await deliveriesOf(server)).some((d) => d.attempts === 1 && d.state === 'pending'));
    const sink = (await adminApi<{ sinks: SinkView[] }>(server, '/sinks')).body.sinks.find((s) => s.name === 'crm')!;
    expect(sink.rate_limited_until).not.toBeNull();
    expect(sink.last_error).toMatch(RATE_LIMITED);

    await until(async () => (await deliveriesOf(server)).every((d) => d.state === 'done'), { timeoutMs: 20_000 });
    // The default schedule's first wait is 30 s: the sink came back after the 5 s HubSpot gave, asking nothing before.
    const [limited, ...rest] = fake.requests;
    expect(limited!.path).toBe('/crm/v3/objects/contacts/batch/upsert');
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((r) => r.at >= limited!.at + 5_000)).toBe(true);
    expect((await deliveriesOf(server)).map((d) => d.attempts).sort()).toEqual([1, 1, 2]);
    const attempts = (await Promise.all(ids.map((id) => attemptsOf(server, id)))).flat();
    expect(attempts.filter((a) => a.outcome !== 'ok')).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'retry',
        httpStatus: 429,
        error: expect.stringMatching(RATE_LIMITED),
      }),
    ]);
    // One caller (the same email), three calls: one contact, three engagements on its timeline.
    expect(fake.contacts.size).toBe(1);
    const [contact] = fake.contacts.values();
    expect([...fake.calls.values()].map((c) => c.associations[0]!.to)).toEqual([contact!.id, contact!.id, contact!.id]);
    expect(new Set([...fake.calls.values()].map((c) => c.properties.hs_call_title))).toEqual(
      new Set(ids.map((id) => `callhook ${id}`)),
    );
  });

  it("ends a delivery dead at its first attempt when the token is revoked, with HubSpot's message, the token in no admin reply", async () => {
    const fake = await fakeHubSpot();
    fake.revoke();
    const server = await serveWith(fake);
    const { id } = await (await post(server.url, sampleCall({ email_address: 'asha@example.in' }))).json();
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    expect(await attemptsOf(server, id)).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'dead',
        httpStatus: 401,
        error: expect.stringMatching(/^HubSpot 401 INVALID_AUTHENTICATION: Authentication credentials not found\./),
      }),
    ]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${fake.token}`);

    for (const path of [`/calls/${id}`, '/sinks', '/deliveries?sink=crm', '/calls?limit=10']) {
      const reply = await fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(reply.status).toBe(200);
      expect(await reply.text()).not.toContain(fake.token);
    }
  });

  it('says in the attempt which contact it used when several have the number', async () => {
    const fake = await fakeHubSpot();
    const older = fake.addContact(
      { firstname: 'Asha', phone: '098123 45678' },
      { modifiedAt: '2026-01-01T00:00:00.000Z' },
    );
    const newer = fake.addContact(
      { firstname: 'Asha', phone: '+91 98123 45678' },
      { modifiedAt: '2026-06-01T00:00:00.000Z' },
    );
    const server = await serveWith(fake);
    const { id } = await (await post(server.url, sampleCall())).json();
    await until(async () => (await deliveriesOf(server)).every((d) => d.state === 'done'));
    expect(await attemptsOf(server, id)).toEqual([
      expect.objectContaining({
        outcome: 'ok',
        note: `2 HubSpot contacts have +919812345678 (${newer}, ${older}); updated ${newer}, the most recently updated`,
      }),
    ]);
  });

  it('does not start with a sink missing its token, or a map naming an unknown root, naming the key', async () => {
    await expect(startServer({ config: { sinks: [{ name: 'crm', type: 'hubspot' }] } })).rejects.toThrow(
      'sinks[0] (crm).token: token is required',
    );
    const map = {
      sinks: [{ name: 'crm', type: 'hubspot', token: 'pat-na1-0000', map: { jobtitle: '{{ caller.title }}' } }],
    };
    await expect(startServer({ config: map })).rejects.toThrow(
      'sinks[0] (crm).map.jobtitle: {{ caller.title }}: unknown root "caller"',
    );
  });
});
