import { afterAll, describe, expect, it } from 'vitest';
import { type FakeGoHighLevel, startFakeGoHighLevel } from '../../../test/fakes/gohighlevel.js';
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
 * The gohighlevel sink in a running serve against the local HighLevel (docs/reference.md#what-every-sink-shares and
 * docs/reference.md#crm-sinks): a 429 with HighLevel's rate-limit headers pauses the whole sink for the window they
 * give, and a revoked token ends the delivery dead with HighLevel's words, the token in no admin reply; a known caller
 * gets a field only the upsert takes.
 */

type Delivery = { sink: string; state: string; attempts: number; callId: string };
type Attempt = { sink: string; attempt: number; outcome: string; httpStatus: number | null; error: string | null };

const servers: TestServer[] = [];
const fakes: FakeGoHighLevel[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

async function serveWith(fake: FakeGoHighLevel, extra: Record<string, unknown> = {}): Promise<TestServer> {
  const server = await startServer({
    env: { GHL_TOKEN: fake.token },
    config: {
      sinks: [
        {
          name: 'ghl',
          type: 'gohighlevel',
          token: '${GHL_TOKEN}',
          location_id: fake.locationId,
          api_url: fake.url,
          ...extra,
        },
      ],
    },
  });
  servers.push(server);
  return server;
}
const deliveriesOf = async (server: TestServer) =>
  (await adminApi<{ deliveries: Delivery[] }>(server, '/deliveries?sink=ghl&limit=50')).body.deliveries;
const attemptsOf = async (server: TestServer, id: string) =>
  (await adminApi<{ attempts: Attempt[] }>(server, `/calls/${id}`)).body.attempts.filter((a) => a.sink === 'ghl');

describe('gohighlevel sink in a running serve', () => {
  it('pauses the whole sink for a 429 as long as X-RateLimit-Interval-Milliseconds says: one attempt recorded with 429, the others spend none, then all are delivered', async () => {
    const fake = await startFakeGoHighLevel();
    fakes.push(fake);
    fake.rateLimitNext(1, 5_000);
    const server = await serveWith(fake, { concurrency: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await (await post(server.url, sampleCall())).json()).id);

    await until(async () => (await deliveriesOf(server)).some((d) => d.attempts === 1 && d.state === 'pending'));
    const sink = (await adminApi<{ sinks: SinkView[] }>(server, '/sinks')).body.sinks.find((s) => s.name === 'ghl')!;
    expect(sink.rate_limited_until).not.toBeNull();
    expect(sink.last_error).toBe('HTTP 429: Too Many Requests (POST /contacts/search)');

    await until(async () => (await deliveriesOf(server)).every((d) => d.state === 'done'), { timeoutMs: 20_000 });
    // The default schedule's first wait is 30 s: the sink came back after the 5 s HighLevel gave, asking nothing
    // before.
    const [limited, ...rest] = fake.requests;
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((r) => r.at >= limited!.at + 5_000)).toBe(true);
    expect((await deliveriesOf(server)).map((d) => d.attempts).sort()).toEqual([1, 1, 2]);
    const attempts = (await Promise.all(ids.map((id) => attemptsOf(server, id)))).flat();
    expect(attempts.filter((a) => a.outcome !== 'ok')).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'retry',
        httpStatus: 429,
        error: 'HTTP 429: Too Many Requests (POST /contacts/search)',
      }),
    ]);
    // One caller (the sample's number), three calls: one contact, three notes.
    expect(fake.contacts).toHaveLength(1);
    expect(fake.notesOf(fake.contacts[0]!.id)).toHaveLength(3);
  });

  it("ends a delivery dead at its first attempt when the token is revoked, with HighLevel's message, the token in no admin reply", async () => {
    const fake = await startFakeGoHighLevel();
    fakes.push(fake);
    fake.revoke();
    const server = await serveWith(fake);
    const { id } = await (await post(server.url, sampleCall({ email_address: 'asha@example.in' }))).json();
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'dead'));
    expect(await attemptsOf(server, id)).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'dead',
        httpStatus: 401,
        error: 'HTTP 401: Invalid JWT (POST /contacts/search)',
      }),
    ]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${fake.token}`);

    for (const path of [`/calls/${id}`, '/sinks', '/deliveries?sink=ghl', '/calls?limit=10']) {
      const reply = await fetch(`${server.url}/admin${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(reply.status).toBe(200);
      expect(await reply.text()).not.toContain(fake.token);
    }
  });

  it('delivers a known caller with a `map` field only the upsert takes (companyName) at the first attempt, to that one contact', async () => {
    const fake = await startFakeGoHighLevel({ allowDuplicates: true });
    fakes.push(fake);
    const known = fake.addContact({ firstName: 'A.', phone: '+919812345678', city: 'Pune' });
    const server = await serveWith(fake, { map: { companyName: '{{ company }}' } });
    const { id } = await (await post(server.url, sampleCall({ company: 'Kettle & Co' }))).json();
    await until(async () => (await deliveriesOf(server)).some((d) => d.state === 'done'));
    expect(await attemptsOf(server, id)).toEqual([expect.objectContaining({ attempt: 1, outcome: 'ok', error: null })]);
    expect(fake.contacts).toEqual([
      expect.objectContaining({ id: known.id, firstName: 'Asha', city: 'Pune', companyName: 'Kettle & Co' }),
    ]);
    expect(fake.notesOf(known.id)).toHaveLength(1);
  });

  it('does not start with a sink missing its token, naming the option', async () => {
    const config = { sinks: [{ name: 'ghl', type: 'gohighlevel', location_id: 've9EPM428h8vShlRW1KT' }] };
    await expect(startServer({ config })).rejects.toThrow('sinks[0] (ghl).token: token is required');
  });
});
