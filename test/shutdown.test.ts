import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RELAY_WINDOW_MS } from '../src/shutdown.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { ADMIN, KEY, post, readStoreFile, sampleCall, tempDir, until } from './helpers/server.js';

/**
 * `npm start` as a process manager runs it, signalled as systemd (`KillMode=control-group`) or a terminal's Ctrl-C
 * signals it: every process of its group at once, npm and node, and npm forwards its copy to node. The drain must
 * take that as one request, end within `shutdown_grace` with a delivery that hangs, and exit 0 through npm.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const started: Started[] = [];
let receiver: Receiver | undefined;

afterEach(async () => {
  for (const { child } of started.splice(0)) if (child.exitCode === null) signalGroup(child, 'SIGKILL');
  await receiver?.close();
  receiver = undefined;
});

/** `npm start` in a process group of its own (detached), with a data dir and a config of one `http` sink. */
async function npmStart(dataDir: string, config: Record<string, unknown>): Promise<Started> {
  const configPath = join(dataDir, 'callhook.json');
  writeFileSync(configPath, JSON.stringify(config));
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      CALLHOOK_DATA_DIR: dataDir,
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
      CALLHOOK_CONFIG: configPath,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const s: Started = { child, url: '', output: () => out, exited };
  started.push(s);
  await until(() => out.includes('listening on') || child.exitCode !== null, { timeoutMs: 20_000 });
  const listening = /listening on (http:\/\/\S+)/.exec(out);
  if (!listening) throw new Error(`npm start exited:\n${out}`);
  s.url = listening[1]!;
  return s;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  process.kill(-child.pid!, signal);
}

function groupAlive(child: ChildProcess): boolean {
  try {
    process.kill(-child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

/** A receiver that takes the request and never answers: the delivery hangs until the drain gives it up. */
async function hangingSink(): Promise<Receiver> {
  receiver = await startReceiver(() => {});
  return receiver;
}

/** One call posted and its delivery under way at the receiver; its record id. */
async function callInFlight(server: Started, sink: Receiver): Promise<string> {
  const reply = await post(server.url, sampleCall());
  expect(reply.status).toBe(200);
  const { id } = (await reply.json()) as { id: string };
  await until(() => sink.received.length === 1);
  return id;
}

function stored(dataDir: string, id: string) {
  return readStoreFile(dataDir, (db) => ({
    calls: db.prepare('SELECT COUNT(*) FROM calls WHERE id = ?').pluck().get(id),
    deliveries: db.prepare('SELECT sink, state, attempts FROM deliveries WHERE call_id = ?').all(id),
  }));
}

describe('npm start, its whole group signalled', () => {
  it('drains once, ends within shutdown_grace with a delivery that hangs, leaves it pending and exits 0', async () => {
    const graceMs = 1_000;
    const sink = await hangingSink();
    const dataDir = tempDir();
    const server = await npmStart(dataDir, {
      shutdown_grace: `${graceMs}ms`,
      sinks: [{ name: 'crm', type: 'http', url: sink.url }],
    });
    const id = await callInFlight(server, sink);

    const signalled = performance.now();
    signalGroup(server.child, 'SIGTERM');
    const code = await server.exited;
    const tookMs = performance.now() - signalled;

    const output = server.output();
    expect(code, output).toBe(0);
    expect(output.match(/draining/g)).toHaveLength(1);
    expect(output).not.toContain('second SIGTERM');
    expect(output).not.toContain('cut short');
    // The hanging attempt had the grace, and the drain ended then, not at the attempt's 30 s time-out.
    expect(tookMs).toBeGreaterThanOrEqual(graceMs - 50);
    expect(tookMs).toBeLessThan(graceMs + 1_500);
    // npm exited after node, not before it: nothing of the group is left draining on its own.
    await until(() => !groupAlive(server.child), { timeoutMs: 2_000 });
    // Returned to pending without spending an attempt: the next start sends it.
    expect(stored(dataDir, id)).toEqual({ calls: 1, deliveries: [{ sink: 'crm', state: 'pending', attempts: 0 }] });
    console.log(`drain with a hanging delivery, shutdown_grace ${graceMs} ms: exit 0 after ${Math.round(tookMs)} ms`);
  });

  it('a second SIGTERM after the relay window cuts the drain short: one line, exit 1, the delivery left to its lease', async () => {
    const sink = await hangingSink();
    const dataDir = tempDir();
    const server = await npmStart(dataDir, {
      shutdown_grace: '20s',
      sinks: [{ name: 'crm', type: 'http', url: sink.url }],
    });
    const id = await callInFlight(server, sink);

    signalGroup(server.child, 'SIGTERM');
    await until(() => server.output().includes('draining'));
    await new Promise((resolve) => setTimeout(resolve, RELAY_WINDOW_MS + 500));
    expect(server.child.exitCode).toBeNull();
    const again = performance.now();
    signalGroup(server.child, 'SIGTERM');
    const code = await server.exited;

    const output = server.output();
    expect(code, output).toBe(1);
    expect(performance.now() - again).toBeLessThan(2_000);
    expect(output.match(/the drain was cut short/g)).toHaveLength(1);
    expect(output).toContain(
      'callhook: second SIGTERM; the drain was cut short: deliveries in flight go back to pending when their lease expires\n',
    );
    // Stored, and its delivery neither lost nor dead: in flight until its lease expires or the next start takes it.
    expect(stored(dataDir, id)).toEqual({ calls: 1, deliveries: [{ sink: 'crm', state: 'in_flight', attempts: 1 }] });
  });
});
