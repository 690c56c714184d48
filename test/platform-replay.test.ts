import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../src/cli/fixtures.js';
import { PLATFORMS, platformOf } from '../src/platforms/index.js';
import type { StoredCall } from '../src/store/admin-queries.js';
import { runCallhook } from './helpers/cli.js';
import { ADMIN, adminApi, KEY, startServer, type TestServer, tempDir } from './helpers/server.js';

/**
 * `callhook replay` of a voice platform's fixtures (docs/reference.md#other-voice-platforms, fixtures/README.md): each
 * is signed afresh with the secret of the config's hook it names, against a real serve over HTTP. Vapi's HMAC
 * authentication refuses a timestamp more than 5 minutes away, so only a fresh signature passes it; so do Retell's and
 * ElevenLabs' signatures, which carry their time.
 */

const SECRET = 'vapi-fixture-secret-4c1d9e';
const FOLDER = 'fixtures/vapi';

describe('callhook replay of fixtures/vapi', () => {
  for (const auth of ['secret', 'bearer', 'hmac'] as const) {
    describe(`against a vapi hook with auth ${auth}`, () => {
      let server: TestServer;
      let config: string;
      beforeAll(async () => {
        server = await startServer({ config: { hooks: { vapi: { platform: 'vapi', secret: SECRET, auth } } } });
        config = join(server.dataDir, 'config.json');
      });
      afterAll(() => server?.close());

      it('stores the report once: accepted, then its second send a duplicate; a status update is ignored', async () => {
        const { code, stdout } = await runCallhook(
          ['replay', FOLDER, '--url', server.url, '--config', config, '--admin-token', ADMIN],
          { CALLHOOK_DATA_DIR: server.dataDir },
        );
        expect(stdout).toMatch(/^ok {3}fixtures\/vapi\/01-end-of-call-report\.json {2}200 \{"status":"accepted"/m);
        expect(stdout).toMatch(
          /^ok {3}fixtures\/vapi\/02-end-of-call-report-again\.json {2}200 \{"status":"duplicate"/m,
        );
        expect(stdout).toMatch(/^ok {3}fixtures\/vapi\/03-status-update-ignored\.json {2}200 \{"status":"ignored"\}$/m);
        expect(stdout.trim().split('\n').at(-1)).toBe('3 passed, 0 failed');
        expect(code).toBe(0);
        const { calls } = (await adminApi(server, '/calls?platform=vapi&test_calls=true')).body as {
          calls: StoredCall[];
        };
        expect(calls).toHaveLength(1);
        expect(calls[0]).toMatchObject({ duplicates: 1, record: { platform: 'vapi', source: 'replay', hook: 'vapi' } });
      });

      it('signs with --secret when given, over the hook’s: a wrong one is refused, nothing stored', async () => {
        const before = (await adminApi(server, '/calls?platform=vapi&test_calls=true')).body.calls.length;
        const { code, stdout } = await runCallhook(
          ['replay', FOLDER, '--url', server.url, '--config', config, '--secret', 'not-the-secret'],
          { CALLHOOK_DATA_DIR: server.dataDir },
        );
        expect(code).toBe(1);
        expect(stdout).toMatch(/^FAIL fixtures\/vapi\/01-end-of-call-report\.json {2}401 \{"error":/m);
        expect(stdout.trim().split('\n').at(-1)).toBe('0 passed, 3 failed');
        expect(stdout).not.toContain(SECRET);
        expect((await adminApi(server, '/calls?platform=vapi&test_calls=true')).body.calls).toHaveLength(before);
      });
    });
  }

  describe('as part of a directory', () => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startServer({ config: { hooks: { vapi: { platform: 'vapi', secret: SECRET } } } });
    });
    afterAll(() => server?.close());
    const base = loadFixtures(['fixtures']).length;

    it('sends fixtures/vapi/ with the rest when the config has its hook, and skips it, said, when it has not', async () => {
      const env = { CALLHOOK_DATA_DIR: server.dataDir };
      const withHook = await runCallhook(
        ['replay', 'fixtures', '--url', server.url, '--key', KEY, '--config', join(server.dataDir, 'config.json')],
        env,
      );
      expect(withHook.stdout.trim().split('\n').at(-1)).toBe(`${base + 3} passed, 0 failed`);
      expect(withHook.code).toBe(0);

      // No config: the default set alone, as it always was.
      const without = await runCallhook(['replay', 'fixtures', '--url', server.url, '--key', KEY], env);
      expect(without.stdout).toMatch(
        /^skipped fixtures\/vapi\/ \(3 fixtures\): the config has no vapi hook named vapi; replay the folder itself/m,
      );
      expect(without.stdout.trim().split('\n').at(-1)).toBe(`${base} passed, 0 failed`);
      expect(without.code).toBe(0);
    });

    it('sends the folder named, with --secret, whatever the config; without a secret it says so and sends nothing', async () => {
      const env = { CALLHOOK_DATA_DIR: server.dataDir };
      const signed = await runCallhook(['replay', FOLDER, '--url', server.url, '--secret', SECRET], env);
      expect(signed.stdout.trim().split('\n').at(-1)).toBe('3 passed, 0 failed');
      const unsigned = await runCallhook(['replay', FOLDER, '--url', server.url], env);
      expect(unsigned.code).toBe(2);
      expect(unsigned.stderr).toBe(
        'callhook: fixtures/vapi/01-end-of-call-report.json: no vapi secret to sign with: pass --secret, or the config (--config) that has the vapi hook vapi\n',
      );
      expect(unsigned.stdout).toBe('');
    });
  });
});

/**
 * Every platform's folder, as fixtures/README.md#voice-platforms-fixturesplatform says it is written: for a hook named
 * like the platform with the recommended parameters and the platform's default options, `{{run}}` in every call id,
 * and no signature of its own but in a case that is meant to be refused.
 */
describe.each(Object.values(PLATFORMS))('fixtures/$name', (platform) => {
  const folder = `fixtures/${platform.name}`;
  const fixtures = loadFixtures([folder]);
  const secret = `${platform.name}-fixture-secret-91ae0f`;
  // The headers this platform's sender signs with, by its default options.
  const signatureHeaders = Object.keys(platform.sign('{}', secret, platform.options.parse({}), Date.now())).map((h) =>
    h.toLowerCase(),
  );
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({
      config: { hooks: { [platform.name]: { platform: platform.name, secret } } },
    });
  });
  afterAll(() => server?.close());

  it('is written for a hook named like the platform, a run of its own, and signed by replay', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(3);
    for (const { file, fixture } of fixtures) {
      expect(fixture.request.hook, file).toBe(platform.name);
      expect(fixture.request.encoding, file).toBe('json');
      const body = JSON.stringify(fixture.request.body);
      expect(body, file).toContain('{{run}}');
      const event = platform.read(fixture.request.body, { timezone: 'UTC' });
      if (event.kind === 'call') expect(event.callId, file).toContain('{{run}}');
      const signs = Object.keys(fixture.request.headers).some((h) => signatureHeaders.includes(h.toLowerCase()));
      expect(signs, file).toBe(fixture.expect.status === 401);
    }
  });

  it('passes every fixture, and again when replayed once more against the same serve', async () => {
    const replay = () =>
      runCallhook(
        [
          'replay',
          folder,
          '--url',
          server.url,
          '--config',
          join(server.dataDir, 'config.json'),
          '--admin-token',
          ADMIN,
        ],
        { CALLHOOK_DATA_DIR: server.dataDir },
      );
    const first = await replay();
    for (const { file } of fixtures)
      expect(first.stdout, file).toMatch(new RegExp(`^ok {3}${file.replaceAll('.', '\\.')} {2}`, 'm'));
    expect(first.stdout.trim().split('\n').at(-1)).toBe(`${fixtures.length} passed, 0 failed`);
    expect(first.code).toBe(0);
    const stored = (await adminApi(server, `/calls?platform=${platform.name}&test_calls=true&limit=100`)).body
      .calls as StoredCall[];
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.every((c) => c.record.platform === platform.name && c.record.source === 'replay')).toBe(true);

    // A second run's calls are its own: none is a duplicate of the first run's.
    const second = await replay();
    expect(second.stdout.trim().split('\n').at(-1)).toBe(`${fixtures.length} passed, 0 failed`);
    expect(second.code).toBe(0);
    const again = (await adminApi(server, `/calls?platform=${platform.name}&test_calls=true&limit=100`)).body
      .calls as StoredCall[];
    expect(again).toHaveLength(2 * stored.length);
  });
});

/**
 * The README's "Other voice platforms" as a user follows it: its config block as the config, with the secrets in the
 * environment, and each `callhook` command it gives run against that serve (the serve's address added: the README's
 * is the default one).
 */
describe("the README's Other voice platforms", () => {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Other voice platforms'), readme.indexOf('## Guarantees'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  const commands = [...section.matchAll(/`callhook ([^`]+)`/g)].map((m) => m[1]!.split(/\s+/));
  const secrets = {
    VAPI_SECRET: 'readme-vapi-secret-1',
    RETELL_API_KEY: 'readme-retell-key-2',
    ELEVENLABS_WEBHOOK_SECRET: 'readme-elevenlabs-secret-3',
    BLAND_WEBHOOK_SECRET: 'readme-bland-secret-4',
  };
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    const dir = tempDir();
    const config = join(dir, 'callhook.yaml');
    writeFileSync(config, yaml ?? '');
    // The serve's admin token in the commands' environment too: replay compares what was stored only with it.
    env = { ...secrets, CALLHOOK_CONFIG: config, CALLHOOK_ADMIN_TOKEN: ADMIN };
    server = await startServer({ env });
    env.CALLHOOK_DATA_DIR = server.dataDir;
  });
  afterAll(() => server?.close());

  it('has a hook for each platform, and its commands work against a serve with that config', async () => {
    expect(yaml).toBeDefined();
    expect(commands.map((c) => c.slice(0, 2).join(' '))).toEqual([
      'simulate --platform',
      'replay fixtures/retell',
      'calls list',
    ]);
    for (const args of commands) {
      const remote = args[0] === 'simulate' || args[0] === 'replay';
      const { code, stdout, stderr } = await runCallhook(remote ? [...args, '--url', server.url] : args, env);
      expect(stderr, args.join(' ')).toBe('');
      expect(code, `${args.join(' ')}\n${stdout}`).toBe(0);
      if (args[0] === 'simulate') expect(stdout).toMatch(/^failed \(lost calls, as the sender records them\): 0$/m);
      if (args[0] === 'replay') {
        expect(stdout).not.toContain('no admin token');
        expect(stdout).toMatch(/^\d+ passed, 0 failed$/m);
      }
    }
    // Every platform's hook takes its own calls: simulated, and a real one (not test traffic) for calls list.
    for (const platform of Object.values(PLATFORMS)) {
      const { code } = await runCallhook(
        ['simulate', '--platform', platform.name, '--count', '3', '--url', server.url],
        env,
      );
      expect(code, platform.name).toBe(0);
    }
    const vapi = platformOf('vapi')!;
    const [, report] = vapi.sample!({
      callId: 'readme-vapi-call',
      direction: 'inbound',
      phoneNumber: '+919812345678',
      agentNumber: '+14155550199',
      startedAt: Date.parse('2026-11-21T08:30:00Z'),
      endedAt: Date.parse('2026-11-21T08:31:00Z'),
      data: { first_name: 'Asha' },
      transcript: [],
    });
    const body = JSON.stringify(report);
    const sent = await fetch(`${server.url}/webhooks/vapi`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...vapi.sign(body, secrets.VAPI_SECRET, vapi.options.parse({}), Date.now()),
      },
      body,
    });
    expect(sent.status).toBe(200);
    const listed = await runCallhook(['calls', 'list', '--platform', 'vapi'], env);
    expect(listed.stdout.trim().split('\n')).toEqual([expect.stringContaining('call_id:readme-vapi-call')]);
    const { calls } = (await adminApi(server, '/calls?platform=retell&test_calls=true&limit=100')).body as {
      calls: StoredCall[];
    };
    expect(calls.length).toBeGreaterThan(20);
  });
});
