import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort, tempDir } from '../../../test/helpers/server.js';
import type { CallRecord } from '../../record.js';
import { PermanentError } from '../errors.js';
import { natsSink } from './nats.js';

/**
 * The nats sink's credentials (docs/reference.md#queues-and-databases: `token` or `user` + `pass`) against servers of
 * the test's own that require them: the machine's shared NATS requires none. Each is a nats-server on a free port with
 * JetStream in a temporary folder, stopped after the file.
 */

const log = pino({ level: 'silent' });
const record: CallRecord = {
  id: '019a0000-0000-7000-8000-0000000000b1',
  hook: 'end-of-call',
  dedup_key: null,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: {},
  extra: {},
  problems: [],
};
const context = { attempt: 1, idempotencyKey: `${record.id}:bus`, signal: new AbortController().signal, log };
const TOKEN = 'tok-7f3a9c21e5b04d68';
const PASS = 'pw-0c4e8b1d9a7f2365';
const hasServer = spawnSync('nats-server', ['--version']).status === 0;
const servers: ChildProcess[] = [];

/** A nats-server with JetStream, requiring `auth`; resolves with its URL once it is ready. */
async function natsServer(auth: string[]): Promise<string> {
  const port = await closedPort();
  const child = spawn(
    'nats-server',
    ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', tempDir('callhook-nats-'), ...auth],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  servers.push(child);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stderr!.on('data', (d) => {
      out += d;
      if (out.includes('Server is ready')) resolve();
    });
    child.on('exit', () => reject(new Error(`nats-server exited:\n${out}`)));
  });
  return `nats://127.0.0.1:${port}`;
}

async function deliverWith(options: Record<string, unknown>): Promise<unknown> {
  const sink = await natsSink.open(
    natsSink.options.parse({ subject: 'calls.{{ hook }}', stream: 'CALLS', ...options }),
    { name: 'bus', dataDir: '/nonexistent', log },
  );
  try {
    await sink.deliver(record, context);
    return undefined;
  } catch (err) {
    return err;
  } finally {
    await sink.close?.();
  }
}

describe.skipIf(!hasServer)('nats sink credentials', () => {
  afterAll(() => {
    for (const child of servers) child.kill();
  });

  it('connects with a token, and a wrong token is a permanent error that does not show it', async () => {
    const servers = await natsServer(['--auth', TOKEN]);
    expect(await deliverWith({ servers, token: TOKEN })).toBeUndefined();
    const err = await deliverWith({ servers, token: 'tok-wrong-00000000' });
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).toMatch(
      /^NATS at 127\.0\.0\.1:\d+: cannot connect: the server refused the credentials/,
    );
    expect((err as Error).message).not.toContain('tok-');
  });

  it('connects with user and pass, and refuses a wrong pass', async () => {
    const servers = await natsServer(['--user', 'callhook', '--pass', PASS]);
    expect(await deliverWith({ servers, user: 'callhook', pass: PASS })).toBeUndefined();
    const err = await deliverWith({ servers, user: 'callhook', pass: 'pw-wrong-000000000' });
    expect(err).toBeInstanceOf(PermanentError);
    expect((err as Error).message).not.toMatch(/pw-/);
  });
});
