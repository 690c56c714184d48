import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every process the bench starts, and every temp dir it makes, is tracked here so that a normal end, a failure
 * and Ctrl-C all leave nothing running and nothing on disk.
 */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const API_KEY = 'bench-key-0123456789abcdef';
const ADMIN_TOKEN = 'bench-admin-0123456789abcdef';
const START_TIMEOUT_MS = 30_000;
/** SIGTERM first (callhook drains); a child still there after this is killed. */
const STOP_GRACE_MS = 3_000;

const children = new Set<ChildProcess>();
const dirs = new Set<string>();

export interface Server {
  name: string;
  url: string;
  pid: number;
  /** The last bytes the child wrote to stderr, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-bench-'));
  dirs.add(dir);
  return dir;
}

/** A million calls take gigabytes: each data dir goes as soon as its run is over. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

export interface CallhookOptions {
  dataDir: string;
  /** Written to a config file passed as CALLHOOK_CONFIG; the built-in default sinks when absent. */
  sinks?: readonly Record<string, unknown>[];
  /** Hooks for the same config file; the default end-of-call hook when absent. */
  hooks?: Record<string, unknown>;
  /** The `alerts` part of the same config file (docs/reference.md#alerts): none, so no rule is on, when absent. */
  alerts?: Record<string, unknown>;
  /** More environment, e.g. DATABASE_URL for replicas sharing one PostgreSQL. */
  env?: Record<string, string>;
}

/** The compiled receiver (`npm run build` first), so the figures are production's and not tsx's. */
export function startCallhook(options: CallhookOptions): Promise<Server> {
  return start('callhook', [join(ROOT, 'dist/cli/index.js'), 'serve'], callhookEnv(options));
}

/** The same, with SQLite's file written on the event loop (bench/baselines/callhook-in-place.ts). */
export function startCallhookInPlace(options: CallhookOptions): Promise<Server> {
  return start(
    'callhook-in-place',
    ['--import', 'tsx', join(ROOT, 'bench/baselines/callhook-in-place.ts')],
    callhookEnv(options),
  );
}

/** callhook's environment, and the config file its sinks, hooks and alerts are written to. */
function callhookEnv({ dataDir, sinks, hooks, alerts, env: extraEnv }: CallhookOptions): Record<string, string> {
  const env: Record<string, string> = {
    CALLHOOK_DATA_DIR: dataDir,
    CALLHOOK_API_KEYS: API_KEY,
    CALLHOOK_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    ...extraEnv,
  };
  if (sinks) {
    env.CALLHOOK_CONFIG = join(dataDir, 'bench-config.json');
    writeFileSync(env.CALLHOOK_CONFIG, JSON.stringify({ sinks, ...(hooks && { hooks }), ...(alerts && { alerts }) }));
  }
  return env;
}

/** A baseline server from bench/baselines, run through tsx: it is loaded once, then runs as plain JS. */
export function startBaseline(
  name: 'hono-empty' | 'hono-durable' | 'callhook-route' | 'express-sqlite',
  env: Record<string, string> = {},
): Promise<Server> {
  return start(name, ['--import', 'tsx', join(ROOT, 'bench/baselines', `${name}.ts`)], env);
}

/** Where the reference receiver lives: beside the project, in a `shared/` folder next to its root. */
export const REFERENCE_SCRIPT = '../shared/bench/minimal-durable.mjs';

/**
 * The reference script's path from the project's root; from a git worktree, also from the main checkout's root,
 * whose parent holds `shared/` when the worktree's does not. Undefined when neither has it.
 */
export function referencePath(): string | undefined {
  const roots = [ROOT];
  const common = spawnSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (common.status === 0 && common.stdout.trim()) roots.push(dirname(common.stdout.trim()));
  return roots.map((root) => resolve(root, REFERENCE_SCRIPT)).find((path) => existsSync(path));
}

/**
 * The reference minimal durable receiver, run as it is: it takes PORT and DATA_DIR and says nothing when it
 * listens, so the port is chosen here and the server is ready once it accepts a connection.
 */
export async function startReference(script: string, dataDir: string): Promise<Server> {
  const port = await freePort();
  return start('minimal-durable', [script], { PORT: String(port), DATA_DIR: dataDir }, port);
}

/** A port the kernel just gave out and took back: free for the child that binds it next. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => (socket.destroy(), resolve(false)));
  });

/**
 * The environment is built rather than inherited: a DATABASE_URL or LOG_LEVEL in the caller's shell would
 * otherwise change what is measured. stdout goes to /dev/null, as a deployment's logs would go somewhere.
 */
function start(
  name: string,
  args: string[],
  extraEnv: Record<string, string>,
  /** For a server that does not say "listening on": it is ready once this port accepts a connection. */
  port?: number,
): Promise<Server> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    ...extraEnv,
  };
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-16_384)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => (children.delete(child), resolve())));

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<Server>((resolve, reject) => {
    let started = false;
    const fail = (why: string) => {
      if (started) return;
      started = true;
      clearTimeout(timer);
      void stop().then(() => reject(new Error(`${name} ${why}:\n${stderr}`)));
    };
    const timer = setTimeout(
      () => fail(`did not say "listening on" within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.once('exit', (code, signal) => fail(`exited during start-up (${signal ?? `code ${code}`})`));
    child.once('error', (err) => fail(`could not be started (${err.message})`));
    const ready = (url: string) => {
      started = true;
      clearTimeout(timer);
      resolve({ name, url, pid: child.pid!, output: () => stderr, stop });
    };
    if (port !== undefined) {
      const poll = async () => {
        while (!started) {
          if (await accepts(port)) return started ? undefined : ready(`http://127.0.0.1:${port}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      void poll();
      return;
    }
    child.stderr!.on('data', () => {
      const match = started ? null : /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) ready(match[1]!.replace('localhost', '127.0.0.1'));
    });
  });
}

/** For the error path and SIGINT: no waiting, nothing left behind. */
export function killEverything(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}
