import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import { type Running, serve } from '../../src/main.js';

export const KEY = 'test-key-0123456789abcdef';
export const OTHER_KEY = 'test-key-rotated-fedcba9876543210';
export const ADMIN = 'test-admin-0123456789abcdef';

export function tempDir(prefix = 'callhook-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface TestServer extends Running {
  url: string;
  dataDir: string;
  printed: string[];
}

/** A real receiver in this process on a free port, with its own data dir. */
export async function startServer({
  env = {},
  config,
  dataDir = tempDir(),
}: {
  env?: Record<string, string>;
  config?: unknown;
  dataDir?: string;
} = {}): Promise<TestServer> {
  let configPath: string | undefined;
  if (config !== undefined) {
    configPath = join(dataDir, 'config.json');
    writeFileSync(configPath, JSON.stringify(config));
  }
  const printed: string[] = [];
  const running = await serve({
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      CALLHOOK_DATA_DIR: dataDir,
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'silent',
      ...env,
    },
    configPath,
    print: (line) => printed.push(line),
  });
  return { ...running, url: `http://127.0.0.1:${running.port}`, dataDir, printed };
}

export interface ChildServer {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** How a spawned serve starts: `umask` (octal, as the shell takes it) sets its process's file mode mask. */
export interface SpawnOptions {
  umask?: string;
}

/** `callhook serve` as its own process, as soon as it is spawned: for tests that act during its start-up. */
export function spawnStarting(
  dataDir: string,
  env: Record<string, string> = {},
  { umask }: SpawnOptions = {},
): Omit<ChildServer, 'url'> {
  const args = ['--import', 'tsx', 'src/cli/index.ts', 'serve'];
  // The shell sets the mask and execs node in its place, so the child is still the server (its pid, its signals).
  const [command, argv] =
    umask === undefined
      ? [process.execPath, args]
      : ['/bin/sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, ...args]];
  const child = spawn(command, argv, {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      CALLHOOK_DATA_DIR: dataDir,
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // Spawned in a test, it ends with the test, however the test ended: a failed expectation must not leave a server
  // running on after the suite, holding its port and data dir. One started in a hook is stopped by the hook's pair.
  try {
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
  } catch {
    // not inside a test
  }
  return { child, output: () => out, exited };
}

/** `callhook serve` as its own process, once it listens, for tests that kill it. */
export async function spawnServer(
  dataDir: string,
  env: Record<string, string> = {},
  options: SpawnOptions = {},
): Promise<ChildServer> {
  const spawned = spawnStarting(dataDir, env, options);
  const { child, output } = spawned;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output()}`)), 20_000);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(output());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace('localhost', '127.0.0.1'));
      }
    };
    child.stderr!.on('data', onData);
    child.on('exit', () => reject(new Error(`server exited:\n${output()}`)));
  });
  return { ...spawned, url };
}

export function post(
  url: string,
  body: unknown,
  { key = KEY, hook = 'end-of-call', source }: { key?: string; hook?: string; source?: 'replay' | 'simulate' } = {},
): Promise<Response> {
  return fetch(`${url}/webhooks/${hook}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      // What `callhook replay` and `callhook simulate` send (docs/reference.md#test-traffic).
      ...(source && { 'x-callhook-source': source }),
    },
    body: JSON.stringify(body),
  });
}

/** A complete call as the recommended parameters describe it (spec section 6.4). */
export function sampleCall(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    call_id: `call-${Math.random().toString(36).slice(2)}`,
    first_name: 'Asha',
    last_name: 'Verma',
    phone_number: '+91 98123 45678',
    call_date: '2026-11-21',
    call_duration: '184',
    call_outcome: 'order placed',
    call_summary: 'Ordered two kettles.',
    sentiment_analysis: 'positive',
    ...overrides,
  };
}

export async function until<T>(probe: () => T | Promise<T>, { timeoutMs = 10_000, everyMs = 25 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Reads a data dir's SQLite database on a read-only connection of its own, as another process would. */
export function readStoreFile<T>(dataDir: string, read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'callhook.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/**
 * A data dir's deliveries by state (of one sink when `sink` is given), read from its database as another process would.
 */
export function deliveryStates(dataDir: string, sink?: string): Record<string, number> {
  const where = sink === undefined ? '' : 'WHERE sink = ?';
  const rows = readStoreFile(
    dataDir,
    (db) =>
      db
        .prepare(`SELECT state, COUNT(*) AS n FROM deliveries ${where} GROUP BY state`)
        .all(...(sink === undefined ? [] : [sink])) as { state: string; n: number }[],
  );
  return Object.fromEntries(rows.map((r) => [r.state, r.n]));
}

/**
 * A request to a serve's admin API (`path` after `/admin`) as an operator makes it, with the admin token, and a
 * `body` sent as JSON: the reply's status and its JSON.
 */
export async function adminApi<T = any>(
  server: { url: string },
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${ADMIN}`);
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  const res = await fetch(`${server.url}/admin${path}`, { ...init, headers });
  return { status: res.status, body: (await res.json()) as T };
}

/** The complete records in a data dir's JSONL file, in file order (none when it does not exist yet). */
export function jsonlRecords(
  dataDir: string,
  file = 'calls.jsonl',
): { id: string; dedup_key: string; [key: string]: unknown }[] {
  let text: string;
  try {
    text = readFileSync(join(dataDir, file), 'utf8');
  } catch {
    return [];
  }
  // The sink may be mid-append while a test reads: only lines ended by a newline are complete.
  return text
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line));
}

/** A port nothing listens on (fetch refuses some well-known low ports outright, so they prove nothing). */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
