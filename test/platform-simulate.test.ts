import { join } from 'node:path';
import { ElevenLabsClient } from '@elevenlabs/elevenlabs-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORMS, platformOf } from '../src/platforms/index.js';
import type { PlatformType } from '../src/platforms/platform.js';
import { platformSends, simulatePlatform } from '../src/simulate/platform-sender.js';
import type { SimulateSummary } from '../src/simulate/summary.js';
import type { StoredCall } from '../src/store/admin-queries.js';
import { runCallhook } from './helpers/cli.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { adminApi, startServer, type TestServer, tempDir } from './helpers/server.js';

/**
 * `callhook simulate --platform NAME` (docs/reference.md#other-voice-platforms): a voice platform's sender played
 * against a real serve, or a stand-in receiver that answers late or 500: its events, its signature, its time-out and its
 * retries.
 */

const SECRET = 'platform-sim-secret-7b3e0a';
type AnyPlatform = PlatformType<any>;
const vapi = platformOf('vapi')!;

const summaryOf = (stdout: string) => JSON.parse(stdout) as SimulateSummary;
/** The events a platform sends about `calls` calls, none sent again. */
const eventsOf = (platform: AnyPlatform, calls: number) =>
  [...platformSends({ platform, count: calls, duplicates: 0, empty: 0, seed: 9, today: '2026-11-22' })].length;

describe('callhook simulate --platform vapi against a serve with a vapi hook', () => {
  for (const auth of ['secret', 'bearer', 'hmac'] as const) {
    describe(`auth ${auth}`, () => {
      let server: TestServer;
      beforeAll(async () => {
        server = await startServer({ config: { hooks: { calls: { platform: 'vapi', secret: SECRET, auth } } } });
      });
      afterAll(() => server?.close());
      const run = (...args: string[]) =>
        runCallhook(
          ['simulate', '--platform', 'vapi', '--url', server.url, '--count', '12', '--rate', '200', '--json', ...args],
          { CALLHOOK_DATA_DIR: server.dataDir },
        );

      it("signs with the config's hook, and every call is stored once, said as Vapi's", async () => {
        const { code, stdout } = await run('--config', join(server.dataDir, 'config.json'), '--duplicates', '0.5');
        const summary = summaryOf(stdout);
        expect(code).toBe(0);
        expect(summary.failures).toBe(0);
        expect(summary.retries).toBe(0);
        // Each call is a status update (ignored) and its end-of-call report (stored); some sent again.
        expect(summary.calls).toBe(12);
        expect(summary.duplicates_sent).toBeGreaterThan(0);
        expect(summary.sent).toBe(24 + summary.duplicates_sent);
        expect(summary.by_status).toEqual({ 200: summary.sent });
        expect(summary.by_reply.accepted! + summary.by_reply.held!).toBe(12);
        expect(summary.by_reply.ignored! + summary.by_reply.duplicate!).toBe(12 + summary.duplicates_sent);

        const { calls } = (await adminApi(server, '/calls?platform=vapi&test_calls=true&limit=100')).body as {
          calls: StoredCall[];
        };
        expect(calls).toHaveLength(12);
        for (const { record } of calls) {
          expect(record).toMatchObject({ hook: 'calls', platform: 'vapi', source: 'simulate' });
          expect(record.dedup_key).toBe(`call_id:${record.extra.call_id}`);
          expect(record.data.call_date).toMatch(/^2\d{3}-\d\d-\d\d$/);
          expect(record.data.call_duration).toEqual(expect.any(Number));
        }
        // Numbers arrive in E.164, as a platform has them from the network.
        expect(calls.some((c) => String(c.record.data.phone_number).startsWith('+'))).toBe(true);
      });

      it('signs with --secret and --option without the config, and a wrong secret loses every call', async () => {
        const given = await run('--secret', SECRET, '--hook', 'calls', '--option', `auth=${auth}`, '--seed', '2');
        expect(given.code).toBe(0);
        expect(summaryOf(given.stdout).failures).toBe(0);

        const wrong = await run('--secret', 'not-it', '--hook', 'calls', '--option', `auth=${auth}`, '--seed', '3');
        const summary = summaryOf(wrong.stdout);
        expect(wrong.code).toBe(1);
        // Refused as not Vapi's, and past 20 refusals a minute by the auth limiter.
        expect(summary.by_status[401]).toBeGreaterThan(0);
        expect((summary.by_status[401] ?? 0) + (summary.by_status[429] ?? 0)).toBe(summary.sent);
        expect(summary.failures).toBe(summary.sent);
      });
    });
  }

  it('says what is wrong with a platform, an option or a missing secret, and sends nothing', async () => {
    const receiver = await startReceiver();
    const cases: [string[], string][] = [
      [['--platform', 'skype'], '--platform must be one of '],
      [
        ['--platform', 'vapi'],
        'no vapi secret to sign with: pass --secret, or the config (--config) that has the vapi hook vapi',
      ],
      [['--platform', 'vapi', '--secret', 's', '--option', 'auth=digest'], '--option auth: '],
      [
        ['--platform', 'vapi', '--secret', 's', '--option', 'colour=red'],
        '--option colour: a vapi hook has no such option',
      ],
      [
        ['--platform', 'vapi', '--secret', 's', '--method', 'GET'],
        "--method is the calling service's; vapi sends its own JSON POSTs",
      ],
      [['--secret', 's'], '--secret goes with --platform'],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await runCallhook(['simulate', '--url', receiver.url, ...args], {
        CALLHOOK_DATA_DIR: tempDir(),
      });
      expect(code, args.join(' ')).toBe(2);
      expect(stderr, args.join(' ')).toContain(message);
    }
    expect(receiver.received).toEqual([]);
    await receiver.close();
  });
});

describe("the platform's time-out and retries", () => {
  let receiver: Receiver;
  afterEach(() => receiver?.close());
  const run = (platform: AnyPlatform, count: number, options: Record<string, string> = {}) =>
    simulatePlatform({
      url: receiver.url,
      hook: 'calls',
      platform,
      secret: SECRET,
      options: platform.options.parse(options),
      count,
      rate: 500,
      duplicates: 0,
      empty: 0,
      seed: 9,
      today: '2026-11-22',
    });

  it('sends each event once when the platform does not retry (Vapi), and counts the 500s as lost', async () => {
    receiver = await startReceiver((_req, res) => res.writeHead(500).end('down for maintenance'));
    const summary = await run(vapi, 3);
    expect(receiver.received).toHaveLength(eventsOf(vapi, 3));
    expect(summary).toMatchObject({ retries: 0, failures: receiver.received.length });
    expect(summary.failed[0]).toEqual({ call_id: expect.any(String), status: 500, body: 'down for maintenance' });
  });

  it('sends again, re-signed, a reply later than the time-out or a non-2xx, as many times as the sender retries', async () => {
    const retrying: AnyPlatform = { ...vapi, sender: { timeoutMs: 300, retries: 3 } };
    const events = eventsOf(vapi, 2);
    // Every event's first try gets no reply in time, its second a 503, its third is answered.
    const tries = new Map<string, number>();
    receiver = await startReceiver((req, res) => {
      const n = (tries.get(req.body) ?? 0) + 1;
      tries.set(req.body, n);
      if (n === 1) setTimeout(() => res.writeHead(200).end('{"status":"accepted"}'), 1_000);
      else if (n === 2) res.writeHead(503).end('busy');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"accepted"}');
    });
    const summary = await run(retrying, 2, { auth: 'hmac' });
    expect(summary.failures).toBe(0);
    expect(summary.retries).toBe(2 * events);
    expect(summary.by_status).toEqual({ timeout: events, 503: events, 200: events });
    expect(receiver.received).toHaveLength(3 * events);
    // Each try is signed when it is sent: the same body, its own timestamp.
    const [first, , third] = receiver.received.filter((r) => r.body === receiver.received[0]!.body);
    expect(Number(third!.headers['x-timestamp'])).toBeGreaterThan(Number(first!.headers['x-timestamp']));

    // Answered 500 every time: tried 1 + 3 times, then lost.
    receiver.respond((_req, res) => res.writeHead(500).end('no'));
    const lost = await run(retrying, 1);
    expect(lost).toMatchObject({ retries: 3 * eventsOf(vapi, 1), failures: eventsOf(vapi, 1) });
    expect(lost.failed[0]!.attempts).toBe(4);
  });

  // Every platform of this version, with its own sender: Retell's retries 3 times.
  for (const platform of Object.values(PLATFORMS)) {
    it(`${platform.name}: each event tried 1 + ${platform.sender.retries} times against a 500`, async () => {
      receiver = await startReceiver((_req, res) => res.writeHead(500).end('no'));
      const summary = await run(platform, 2);
      const events = eventsOf(platform, 2);
      expect(receiver.received).toHaveLength(events * (1 + platform.sender.retries));
      expect(summary).toMatchObject({ failures: events, retries: events * platform.sender.retries });
    });
  }

  it('prints the sender, the retries and the lost calls with their attempts', async () => {
    receiver = await startReceiver((_req, res) => res.writeHead(500).end('no'));
    const { code, stdout } = await runCallhook([
      'simulate',
      '--platform',
      'vapi',
      '--secret',
      SECRET,
      '--url',
      receiver.url,
      '--count',
      '1',
      '--duplicates',
      '0',
    ]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^vapi's sender: time-out 20000 ms, up to 0 retries\nsent 2 requests for 1 calls/);
    expect(stdout).toMatch(/^replies by status: 500 2$/m);
    expect(stdout).toMatch(/^failed \(lost calls, as the sender records them\): 2$/m);
    expect(receiver.received.every((r) => r.url === '/webhooks/vapi')).toBe(true);
  });
});

describe('the official SDKs agree', () => {
  it("what simulate --platform elevenlabs signs passes @elevenlabs/elevenlabs-js's webhooks.constructEvent", async () => {
    const receiver = await startReceiver();
    const { code } = await runCallhook([
      'simulate',
      '--platform',
      'elevenlabs',
      '--secret',
      SECRET,
      '--url',
      receiver.url,
      '--count',
      '3',
    ]);
    await receiver.close();
    expect(code).toBe(0);
    expect(receiver.received.length).toBeGreaterThanOrEqual(3);
    const { webhooks } = new ElevenLabsClient({ apiKey: 'not-used' });
    for (const { body, headers } of receiver.received) {
      const signature = String(headers['elevenlabs-signature']);
      await expect(webhooks.constructEvent(body, signature, SECRET)).resolves.toEqual(JSON.parse(body));
      await expect(webhooks.constructEvent(body, signature, 'another-secret')).rejects.toThrow(/does not match/);
    }
  });
});
