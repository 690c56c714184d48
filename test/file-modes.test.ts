import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ChildServer, jsonlRecords, post, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';

/**
 * docs/reference.md#secrets: the data dir is 0700 and every file callhook writes in it 0600, also when the directory
 * existed before (a container volume), and so is a `jsonl` sink's file elsewhere. The server runs under umask 022,
 * the usual one, which leaves new files 0644 and new folders 0755.
 */

const UMASK = '022';
const mode = (path: string) => statSync(path).mode & 0o777;
const modesIn = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, mode(join(dir, name))]));

interface Layout {
  dataDir: string;
  /** A folder of the operator's, outside the data dir, holding a `jsonl` sink's file. */
  theirs: string;
  /** A folder callhook creates for another `jsonl` sink's file. */
  made: string;
  env: Record<string, string>;
}

/** A data dir that existed before, 0755, with sinks writing in it and in two folders elsewhere. */
function layout(): Layout {
  const dataDir = join(tempDir(), 'data');
  mkdirSync(dataDir);
  chmodSync(dataDir, 0o755);
  const theirs = tempDir();
  chmodSync(theirs, 0o755);
  const made = join(tempDir(), 'exports', 'daily');
  const config = join(tempDir(), 'callhook.json');
  writeFileSync(
    config,
    JSON.stringify({
      sinks: [
        { name: 'jsonl', type: 'jsonl' },
        { name: 'shared', type: 'jsonl', path: join(theirs, 'shared.jsonl') },
        { name: 'exports', type: 'jsonl', path: join(made, 'calls.jsonl') },
      ],
    }),
  );
  // No keys given: serve generates them and keeps them in the data dir.
  return { dataDir, theirs, made, env: { CALLHOOK_CONFIG: config, CALLHOOK_API_KEYS: '', CALLHOOK_ADMIN_TOKEN: '' } };
}

/** Posts a call with the key serve kept, and waits for it in all three `jsonl` files. */
async function deliverOne(server: ChildServer, { dataDir, theirs, made }: Layout): Promise<void> {
  const key = readFileSync(join(dataDir, 'api-keys'), 'utf8').trim().split('\n')[0]!;
  const call = sampleCall();
  expect((await post(server.url, call, { key })).status).toBe(200);
  const has = (dir: string, file: string) =>
    jsonlRecords(dir, file).some((r) => r.dedup_key === `call_id:${call.call_id}`);
  await until(() => has(dataDir, 'calls.jsonl') && has(theirs, 'shared.jsonl') && has(made, 'calls.jsonl'));
}

function expectOwnerOnly({ dataDir, theirs, made }: Layout, expected: string[]): void {
  expect(mode(dataDir)).toBe(0o700);
  expect(modesIn(dataDir)).toEqual(Object.fromEntries(expected.map((name) => [name, 0o600])));
  expect(mode(join(theirs, 'shared.jsonl'))).toBe(0o600);
  expect(mode(theirs)).toBe(0o755); // the operator's folder: not callhook's to change
  expect([mode(made), mode(join(made, '..'))]).toEqual([0o700, 0o700]);
  expect(mode(join(made, 'calls.jsonl'))).toBe(0o600);
}

async function stop(server: ChildServer, signal: NodeJS.Signals): Promise<void> {
  server.child.kill(signal);
  await server.exited;
}

describe('file modes under umask 022', () => {
  it('a data dir that existed 0755 is made 0700, and the database, its WAL files, the lock, the keys and every jsonl file are 0600', async () => {
    const at = layout();
    const server = await spawnServer(at.dataDir, at.env, { umask: UMASK });
    try {
      await deliverOne(server, at);
      // While it runs, so the WAL and its shared-memory file are there.
      expectOwnerOnly(at, [
        'admin-token',
        'api-keys',
        'callhook.db',
        'callhook.db-serve.lock',
        'callhook.db-shm',
        'callhook.db-wal',
        'calls.jsonl',
      ]);
    } finally {
      await stop(server, 'SIGTERM');
    }
  });

  it('files an older version left 0644, a killed run’s WAL files among them, are made 0600 at the next start', async () => {
    const at = layout();
    const first = await spawnServer(at.dataDir, at.env, { umask: UMASK });
    await deliverOne(first, at);
    await stop(first, 'SIGKILL'); // leaves callhook.db-wal and callhook.db-shm behind
    const left = readdirSync(at.dataDir).sort();
    expect(left).toEqual(expect.arrayContaining(['callhook.db-shm', 'callhook.db-wal']));
    chmodSync(at.dataDir, 0o755);
    for (const name of left) chmodSync(join(at.dataDir, name), 0o644);
    chmodSync(join(at.theirs, 'shared.jsonl'), 0o644);
    chmodSync(join(at.made, 'calls.jsonl'), 0o644);

    const second = await spawnServer(at.dataDir, at.env, { umask: UMASK });
    try {
      expectOwnerOnly(at, left);
      await deliverOne(second, at);
      expectOwnerOnly(at, left);
    } finally {
      await stop(second, 'SIGTERM');
    }
  });
});
