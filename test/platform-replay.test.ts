import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../src/cli/fixtures.js';
import type { StoredCall } from '../src/store/admin-queries.js';
import { runCallhook } from './helpers/cli.js';
import { ADMIN, adminApi, KEY, startServer, type TestServer } from './helpers/server.js';

/**
 * `callhook replay` of a voice platform's fixtures (docs/reference.md#other-voice-platforms, fixtures/README.md): each
 * is signed afresh with the secret of the config's hook it names, against a real serve over HTTP. Vapi's HMAC
 * authentication refuses a timestamp more than 5 minutes away, so only a fresh signature passes it.
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
