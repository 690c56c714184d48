import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readKeyFile } from '../src/keys/file.js';
import { callhook, runCallhook } from './helpers/cli.js';
import {
  ADMIN,
  type ChildServer,
  jsonlRecords,
  post,
  readStoreFile,
  sampleCall,
  spawnServer,
  tempDir,
  until,
} from './helpers/server.js';

/**
 * A real full disk under a real `callhook serve`: a small tmpfs, filled to the last byte while the receiver runs.
 * test/storage-faults.test.ts fakes the database's side on one connection (`max_page_count`); here it is the
 * disk itself, under everything a deployment has on it: the writer thread's group commits and WAL, the readiness
 * probe, the delivery worker, and the JSONL file the sink appends to.
 *
 * Mounting needs root (or CAP_SYS_ADMIN), as in CI; elsewhere the test is skipped, and CI fails on a skip.
 */

const SIZE = '8m';

function mount(dir: string): boolean {
  return (
    spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE},mode=0700`, 'tmpfs', dir], { stdio: 'ignore' }).status === 0
  );
}

function unmount(dir: string): void {
  spawnSync('umount', ['-l', dir], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
}

function canMount(): boolean {
  const dir = tempDir('callhook-mount-probe-');
  try {
    return mount(dir);
  } finally {
    unmount(dir);
  }
}

/** Writes a file until the disk refuses another byte; removing it gives the space back. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** A call about 20 KB long, as a long transcript summary makes it: it needs fresh pages to be stored. */
const bigCall = (callId: string) => sampleCall({ call_id: callId, call_summary: `${callId} `.repeat(2000) });

async function reply(server: ChildServer, callId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await post(server.url, bigCall(callId));
  return { status: res.status, body: await res.json() };
}

const readyz = async (server: ChildServer) => (await fetch(`${server.url}/readyz`)).status;

/** SIGTERM, as an orchestrator stops it: serve drains and exits 0. */
async function stop(server: ChildServer): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
}

type Start = (dataDir: string, env: Record<string, string>) => Promise<ChildServer>;

/** A fresh tmpfs for one test, and `serve` processes to start on it; any still running at the end are killed. */
async function withDisk(work: (disk: string, start: Start) => Promise<void>): Promise<void> {
  const disk = tempDir('callhook-full-');
  expect(mount(disk)).toBe(true);
  const started: ChildServer[] = [];
  try {
    await work(disk, async (dataDir, env) => {
      const server = await spawnServer(dataDir, env);
      started.push(server);
      return server;
    });
  } finally {
    for (const server of started) {
      if (server.child.exitCode !== null || server.child.signalCode !== null) continue;
      server.child.kill('SIGKILL');
      await server.exited;
    }
    unmount(disk);
  }
}

describe.skipIf(!canMount())('a real full disk under `callhook serve`', () => {
  it('under the database: refuses with 503 while full, acknowledges only what is on disk, and catches up when space returns', {
    timeout: 120_000,
  }, async () => {
    await withDisk(async (dataDir, start) => {
      const config = join(tempDir(), 'callhook.json');
      writeFileSync(
        config,
        JSON.stringify({
          sinks: [{ name: 'jsonl', type: 'jsonl', retry: { attempts: 100, schedule: ['200ms'], jitter: 0 } }],
        }),
      );
      const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'warn' };
      let server = await start(dataDir, env);
      const acknowledged = new Map<string, unknown>(); // call_id → record id

      for (let i = 0; i < 5; i++) {
        const r = await reply(server, `before-${i}`);
        expect(r.status).toBe(200);
        acknowledged.set(`before-${i}`, r.body.id);
      }
      await until(() => jsonlRecords(dataDir).length === 5);

      const filler = join(dataDir, 'filler');
      fill(filler);

      // Calls go on arriving. The WAL may still have room for a few; once one is refused, the disk is full for
      // the calls after it too.
      const refused: string[] = [];
      for (let i = 0; i < 200 && refused.length < 10; i++) {
        const callId = `full-${i}`;
        const r = await reply(server, callId);
        if (r.status === 200) {
          expect(refused, `${callId} accepted after a refusal`).toEqual([]);
          expect(r.body).toMatchObject({ status: 'accepted' });
          acknowledged.set(callId, r.body.id);
        } else {
          expect(r).toEqual({
            status: 503,
            body: { error: 503, message: 'The store cannot commit the call right now' },
          });
          refused.push(callId);
        }
      }
      expect(refused).toHaveLength(10);
      expect(await readyz(server)).toBe(503);
      // The admin API still reads, and the process is still there.
      const admin = await fetch(`${server.url}/admin/calls?limit=1`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(admin.status).toBe(200);
      expect(server.child.exitCode).toBeNull();

      unlinkSync(filler);
      await until(async () => (await readyz(server)) === 200);
      // The refused calls left nothing behind: sent again (by an operator, say), each is a new call, not a duplicate.
      for (const callId of [...refused, 'after']) {
        const r = await reply(server, callId);
        expect(r.body, callId).toMatchObject({ status: 'accepted' });
        acknowledged.set(callId, r.body.id);
      }
      // The outage is in the log once, with its end, not once per refused call.
      const logged = server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; refusedCalls?: number });
      expect(logged.filter((l) => /commit/.test(l.msg)).map((l) => l.msg)).toEqual([
        'cannot commit a call; calls are refused with 503 until the store commits again',
        'the store commits again',
      ]);
      expect(logged.find((l) => l.msg === 'the store commits again')?.refusedCalls).toBe(10);

      // A delivery attempted while the disk was full could not record its failure and holds its lease: a restart
      // takes it back at once. After it, the JSONL file holds every acknowledged call once and nothing else.
      await stop(server);
      server = await start(dataDir, env);
      await until(() => jsonlRecords(dataDir).length >= acknowledged.size, { timeoutMs: 30_000 });
      const lines = jsonlRecords(dataDir);
      expect(lines.map((r) => r.id).sort()).toEqual([...acknowledged.values()].sort());

      const stored = readStoreFile(
        dataDir,
        (db) => db.prepare('SELECT dedup_key, id FROM calls').all() as { dedup_key: string; id: string }[],
      );
      expect(Object.fromEntries(stored.map((r) => [r.dedup_key, r.id]))).toEqual(
        Object.fromEntries([...acknowledged].map(([callId, id]) => [`call_id:${callId}`, id])),
      );
      await stop(server);
    });
  });

  it('under the JSONL file: holds its deliveries, retried, and never tears or repeats a line', {
    timeout: 60_000,
  }, async () => {
    await withDisk(async (outDir, start) => {
      const dataDir = tempDir();
      const file = join(outDir, 'calls.jsonl');
      const config = join(dataDir, 'callhook.json');
      writeFileSync(
        config,
        JSON.stringify({
          sinks: [
            { name: 'jsonl', type: 'jsonl', path: file, retry: { attempts: 100, schedule: ['200ms'], jitter: 0 } },
          ],
        }),
      );
      const server = await start(dataDir, { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' });
      const acknowledged: unknown[] = [];
      const send = async (callId: string) => {
        const r = await reply(server, callId);
        expect(r.body, callId).toMatchObject({ status: 'accepted' });
        acknowledged.push(r.body.id);
      };
      for (let i = 0; i < 5; i++) await send(`before-${i}`);
      await until(() => jsonlRecords(outDir).length === 5);

      const filler = join(outDir, 'filler');
      fill(filler);
      // The database's disk has room: calls go on being acknowledged, and the receiver stays ready.
      for (let i = 0; i < 20; i++) await send(`while-${i}`);
      expect(await readyz(server)).toBe(200);
      await until(
        () =>
          readStoreFile(
            dataDir,
            (db) => db.prepare(`SELECT COUNT(*) FROM attempts WHERE error LIKE '%ENOSPC%'`).pluck().get() as number,
          ) >= 20,
      );
      expect(jsonlRecords(outDir)).toHaveLength(5);

      unlinkSync(filler);
      await until(() => jsonlRecords(outDir).length >= acknowledged.length);
      expect(
        jsonlRecords(outDir)
          .map((r) => r.id)
          .sort(),
      ).toEqual([...acknowledged].sort());
      await until(
        () =>
          readStoreFile(dataDir, (db) =>
            db.prepare(`SELECT COUNT(*) FROM deliveries WHERE state != 'done'`).pluck().get(),
          ) === 0,
      );
      await stop(server);
    });
  });

  it('at start-up and under `keys generate`: one line, exit 2, and every key file stays whole', {
    timeout: 60_000,
  }, async () => {
    await withDisk(async (disk, start) => {
      const kept = join(disk, 'kept');
      const generated = await runCallhook(['keys', 'generate'], { CALLHOOK_DATA_DIR: kept });
      expect(generated.code).toBe(0);
      const key = generated.stdout.trim();
      const filler = join(disk, 'filler');
      fill(filler);

      // Rotation on a full disk fails as a whole: the key the sender has still opens the door.
      const rotate = await runCallhook(['keys', 'generate'], { CALLHOOK_DATA_DIR: kept });
      expect(rotate.code).toBe(2);
      expect(rotate.stderr).toMatch(/^callhook: ENOSPC: no space left on device[^\n]*\n$/);
      expect(readKeyFile(join(kept, 'api-keys'))).toEqual([key]);
      expect(readdirSync(kept)).toEqual(['api-keys']);

      // A first start on a full disk: one line, and no empty key file that would stop every later start.
      const fresh = join(disk, 'fresh');
      const firstStart = await callhook(['serve'], {
        CALLHOOK_DATA_DIR: fresh,
        PORT: '0',
        HOST: '127.0.0.1',
        CALLHOOK_API_KEYS: '',
        CALLHOOK_ADMIN_TOKEN: '',
      });
      expect(firstStart.code).toBe(2);
      expect(firstStart.stderr).toMatch(/^callhook: ENOSPC: no space left on device[^\n]*\n$/);
      expect(existsSync(fresh) ? readdirSync(fresh) : []).toEqual([]);

      unlinkSync(filler);
      const generatedKeys = { CALLHOOK_API_KEYS: '', CALLHOOK_ADMIN_TOKEN: '' };
      const first = await start(fresh, generatedKeys);
      // The banner shows the generated key, then the generated admin token, once each.
      const shown = () => [...first.output().matchAll(/Authorization: Bearer (\S+)\n/g)].map((m) => m[1]!);
      const [printed, printedAdmin] = (await until(() => (shown().length === 2 ? shown() : undefined)))!;
      expect(readKeyFile(join(fresh, 'api-keys'))).toEqual([printed]);
      expect((await post(first.url, sampleCall(), { key: printed })).status).toBe(200);
      expect(
        (await fetch(`${first.url}/admin/calls`, { headers: { authorization: `Bearer ${printedAdmin}` } })).status,
      ).toBe(200);
      await stop(first);

      // A restart on a full disk: the line names the database and the likely cause.
      fill(filler);
      const restart = await callhook(['serve'], {
        CALLHOOK_DATA_DIR: fresh,
        PORT: '0',
        HOST: '127.0.0.1',
        CALLHOOK_API_KEYS: '',
        CALLHOOK_ADMIN_TOKEN: '',
      });
      expect(restart.code).toBe(2);
      expect(restart.stderr).toBe(
        `callhook: cannot open the SQLite store ${join(fresh, 'callhook.db')}: disk I/O error (is the disk full?)\n`,
      );
      unlinkSync(filler);
      const again = await start(fresh, generatedKeys);
      expect((await post(again.url, sampleCall(), { key: printed })).status).toBe(200);
      await stop(again);
    });
  });
});
