import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskedForCli } from './masked.js';

describe("a command's error line", () => {
  it('holds no key given on the command line, nor a secret of the config', async () => {
    const env = { CALLHOOK_API_KEYS: 'configured-key-0123456789', CALLHOOK_CONFIG: '' };
    const text = 'HTTP 401: key given-key-0123456789 and configured-key-0123456789 and cli-token-0123456789 refused';
    expect(
      await maskedForCli(
        text,
        ['node', 'callhook', 'replay', '--key', 'given-key-0123456789', '--admin-token=cli-token-0123456789'],
        env,
      ),
    ).toBe('HTTP 401: key *** and *** and *** refused');
  });

  it('holds no credential of a URL given on the command line, and reads --config=FILE', async () => {
    const text = 'cannot reach http://bob:UrlPwCli55@127.0.0.1:9/api/v1?access_token=CliAccTok66';
    expect(
      await maskedForCli(
        text,
        [
          'node',
          'callhook',
          'reconcile',
          '--api-url',
          'http://bob:UrlPwCli55@127.0.0.1:9/api/v1?access_token=CliAccTok66',
        ],
        {},
      ),
    ).toBe('cannot reach http://bob:***@127.0.0.1:9/api/v1?access_token=***');
    expect(
      await maskedForCli(
        'x AdmUrlPw11 y',
        ['node', 'callhook', 'calls', 'release', 'abc', '--url=http://u:AdmUrlPw11@127.0.0.1:1/'],
        {},
      ),
    ).toBe('x *** y');
  });

  it('reads the secrets of a config given as --config=FILE, -c FILE or --config FILE', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'callhook-masked-')), 'callhook.yaml');
    writeFileSync(
      file,
      'sinks:\n  - { name: crm, type: http, url: "https://crm.example.com/in?access_token=TagQTok12345" }\n',
    );
    for (const args of [[`--config=${file}`], ['-c', file], ['--config', file]]) {
      expect(
        await maskedForCli('refused TagQTok12345', ['node', 'callhook', 'serve', ...args], {}),
        args.join(' '),
      ).toBe('refused ***');
    }
  });

  it("masks the options a sink type declares secret though their names say nothing: a nats `pass`, a module sink's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callhook-masked-'));
    writeFileSync(
      join(dir, 'sink.js'),
      'export const secretOptions = ["dsn"];\nexport default () => ({ async deliver() {} });\n',
    );
    const file = join(dir, 'callhook.yaml');
    writeFileSync(
      file,
      [
        'sinks:',
        '  - { name: bus, type: nats, user: callhook, pass: NatsPass4455 }',
        '  - { name: mine, type: module, module: ./sink.js, dsn: ModuleDsn7788 }',
      ].join('\n'),
    );
    expect(
      await maskedForCli('refused NatsPass4455 and ModuleDsn7788', ['node', 'callhook', 'serve', '--config', file], {}),
    ).toBe('refused *** and ***');
  });

  it('is kept as it is when the config cannot be read', async () => {
    expect(
      await maskedForCli(
        'config file /nowhere.yaml: ENOENT',
        ['node', 'callhook', 'serve', '--config', '/nowhere.yaml'],
        {},
      ),
    ).toBe('config file /nowhere.yaml: ENOENT');
  });
});
