import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCallhook } from '../../test/helpers/cli.js';
import { tempDir } from '../../test/helpers/server.js';
import { commitData } from '../../test/helpers/store-inputs.js';
import { SQLITE_FILE } from '../store/open.js';
import { openSqliteStore } from '../store/sqlite/store.js';
import { runCli } from './program.js';

/** The program run in this process: what commander and a failed command give, as codes and lines on io. */

describe('runCli', () => {
  it('prints help on stdout with exit 0, at the top and for a command, and exits nothing', async () => {
    for (const args of [['--help'], ['calls', '--help'], ['help', 'purge']]) {
      const { code, stdout, stderr } = await runCallhook(args);
      expect({ code, stderr }, args.join(' ')).toEqual({ code: 0, stderr: '' });
      expect(stdout, args.join(' ')).toMatch(/^Usage: callhook /);
    }
  });

  it("gives commander's one line and exit 1 for an unknown command, option or choice, help on stderr for none", async () => {
    expect(await runCallhook(['frobnicate'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: unknown command 'frobnicate'\n",
    });
    expect(await runCallhook(['calls', 'list', '--bogus'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "error: unknown option '--bogus'\n",
    });
    const choice = await runCallhook(['deliveries', 'list', '--state', 'lost']);
    expect(choice).toMatchObject({ code: 1, stdout: '' });
    expect(choice.stderr).toMatch(/^error: option '--state <state>' argument 'lost' is invalid\. .*\n$/);
    const none = await runCallhook([]);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toMatch(/^Usage: callhook /);
  });

  it('gives a failed command one line on stderr with exit 2, the key given on the command line masked', async () => {
    const key = 'key-given-0123456789';
    const missing = join(tempDir(), key);
    const { code, stdout, stderr } = await runCallhook(['replay', missing, '--key', key]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^callhook: ENOENT: no such file or directory, stat '.*\/\*\*\*'\n$/);
  });

  it('exits 0 with nothing on stderr when the reader of stdout goes away, and the next run starts open', async () => {
    const dataDir = tempDir();
    const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
    const id = await commitData(store, 'end-of-call', { first_name: 'Asha' }, '2026-11-20T10:00:00.000Z');
    await store.close();
    const env = { ...process.env, LOG_LEVEL: 'silent', CALLHOOK_DATA_DIR: dataDir };
    const stderr: string[] = [];
    const io = {
      env,
      stdin: Readable.from([]),
      stdout: new Writable({
        write: (_chunk, _encoding, done) => done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
      }).on('error', () => {}),
      stderr: new Writable({ write: (chunk: Buffer, _encoding, done) => done(void stderr.push(chunk.toString())) }),
    };
    expect(await runCli(['node', 'callhook', 'calls', 'export'], io)).toBe(0);
    expect(stderr).toEqual([]);
    const next = await runCallhook(['calls', 'export'], { CALLHOOK_DATA_DIR: dataDir });
    expect(next.code).toBe(0);
    expect(JSON.parse(next.stdout).id).toBe(id);
  });

  it("reads the config from the env it is given, not the process's", async () => {
    const dir = tempDir();
    const path = join(dir, 'callhook.json');
    writeFileSync(path, JSON.stringify({ hooks: { orders: {} } }));
    const { code, stdout } = await runCallhook(['config', 'check'], { CALLHOOK_DATA_DIR: dir, CALLHOOK_CONFIG: path });
    expect(code).toBe(0);
    expect(Object.keys(JSON.parse(stdout).hooks)).toEqual(['end-of-call', 'orders']);
    expect(process.env.CALLHOOK_CONFIG).toBeUndefined();
  });
});
