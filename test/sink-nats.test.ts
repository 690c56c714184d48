import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsAdmin, natsAdmin } from './helpers/nats-stream.js';
import {
  adminApi,
  deliveryStates,
  post,
  readStoreFile,
  sampleCall,
  spawnServer,
  startServer,
  tempDir,
  until,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { startTcpProxy } from './helpers/tcp-proxy.js';

/**
 * The nats sink end to end (docs/reference.md#queues-and-databases): a real receiver publishing to the machine's NATS
 * JetStream, each test on a stream and subjects of its own. A delivery made again (a redeliver, a publish whose
 * acknowledgement never came before a kill -9) leaves one message, by `Nats-Msg-Id` within the stream's duplicate
 * window; a server away for a while gets every call once it is back; a subject no stream listens on is dead at once.
 */

const url = serviceUrl('nats');
let nats: NatsAdmin;

/** A stream of the test's own that the sink creates, deleted after the file. */
function own(): { stream: string; subject: string; prefix: string } {
  const { stream, prefix } = nats.unique();
  nats.forget(stream);
  return { stream, prefix, subject: `${prefix}.{{ hook }}` };
}

describe.skipIf(!url)('the nats sink end to end', () => {
  beforeAll(async () => {
    nats = await natsAdmin(url!);
  });
  afterAll(async () => {
    await nats?.close();
  });

  it('publishes a call as one message with Nats-Msg-Id, a redelivered call adds none, and a subject with no stream is dead at once', async () => {
    const { stream, subject, prefix } = own();
    const sinks = [
      { name: 'bus', type: 'nats', servers: url, stream, subject },
      { name: 'nowhere', type: 'nats', servers: url, subject: `${prefix}-nowhere.{{ hook }}` },
    ];
    const server = await startServer({ config: { sinks } });
    try {
      const { id } = await (await post(server.url, sampleCall({ call_id: 'nats-e2e-1' }))).json();
      const settled = async (attempts: number) => {
        const detail = (await adminApi(server, `/calls/${id}`)).body;
        const done = detail.deliveries.find((d: { sink: string }) => d.sink === 'bus')?.state === 'done';
        const dead = detail.deliveries.find((d: { sink: string }) => d.sink === 'nowhere')?.state === 'dead';
        return done && dead && detail.attempts.length === attempts ? detail : undefined;
      };
      const detail = await until(() => settled(2));
      expect(await nats.messages(stream)).toEqual([
        { subject: `${prefix}.end-of-call`, msgId: `${id}:bus`, body: detail.record },
      ]);
      const nowhere = detail.attempts.filter((a: { sink?: string; error?: string }) =>
        a.error?.includes('no JetStream stream'),
      );
      expect(nowhere).toHaveLength(1);
      expect(nowhere[0].error).toMatch(`no JetStream stream listens on subject ${prefix}-nowhere.end-of-call`);

      expect(
        (await adminApi(server, `/calls/${id}/redeliver`, { method: 'POST', body: JSON.stringify({ sinks: ['bus'] }) }))
          .body,
      ).toMatchObject({ scheduled: 1 });
      const again = await until(() => settled(3));
      expect(again.attempts.filter((a: { outcome: string }) => a.outcome === 'ok')).toHaveLength(2);
      expect(await nats.messages(stream)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('starts with NATS away, and delivers every call once after it was away, before and after the first connection', async () => {
    const proxy = await startTcpProxy(url!, 4222);
    const { stream, subject } = own();
    const retry = { attempts: 100, schedule: ['100ms'], jitter: 0 };
    await proxy.down();
    const server = await startServer({
      config: { sinks: [{ name: 'bus', type: 'nats', servers: proxy.url(url!), stream, subject, retry }] },
    });
    try {
      const ids: string[] = [];
      const postAll = async (from: number) => {
        for (let i = from; i < from + 5; i++)
          ids.push((await (await post(server.url, sampleCall({ call_id: `nats-away-${i}` }))).json()).id);
      };
      const retried = () =>
        readStoreFile(
          server.dataDir,
          (db) =>
            db
              .prepare(`SELECT COUNT(DISTINCT delivery_id) FROM attempts WHERE outcome = 'retry'`)
              .pluck()
              .get() as number,
        );
      const lastError = async (id: string) => (await adminApi(server, `/calls/${id}`)).body.attempts[0].error as string;

      // Away before the first connection: the connect fails, and is tried again by the next attempt.
      await postAll(0);
      await until(() => retried() === 5);
      expect(await lastError(ids[0]!)).toMatch(new RegExp(`^NATS at 127\\.0\\.0\\.1:${proxy.port}: cannot connect`));
      await proxy.up();
      await until(() => deliveryStates(server.dataDir, 'bus').done === 5, { timeoutMs: 20_000 });

      // Away while connected: a publish fails at once while the client reconnects.
      await proxy.down();
      await postAll(5);
      await until(() => retried() === 10);
      expect(await lastError(ids[5]!)).toBe(
        `NATS at 127.0.0.1:${proxy.port}: connection lost, the client is reconnecting`,
      );
      await proxy.up();
      await until(() => deliveryStates(server.dataDir, 'bus').done === 10, { timeoutMs: 20_000 });
      const messages = await nats.messages(stream);
      expect(messages.map((m) => m.body.id).sort()).toEqual([...ids].sort());
      expect(messages.map((m) => m.msgId).sort()).toEqual(ids.map((id) => `${id}:bus`).sort());
    } finally {
      await server.close();
      await proxy.close();
    }
  });

  it('leaves one message per call when the receiver is killed with publishes whose acknowledgements never came', {
    timeout: 60_000,
  }, async () => {
    const proxy = await startTcpProxy(url!, 4222);
    const { stream, subject } = own();
    const dataDir = tempDir();
    const config = join(dataDir, 'callhook.json');
    const concurrency = 16;
    writeFileSync(
      config,
      JSON.stringify({
        sinks: [{ name: 'bus', type: 'nats', servers: proxy.url(url!), stream, subject, concurrency }],
      }),
    );
    const env = { CALLHOOK_CONFIG: config, LOG_LEVEL: 'error' };
    const count = async () => (await nats.jsm.streams.info(stream).catch(() => undefined))?.state.messages ?? 0;
    try {
      const first = await spawnServer(dataDir, env);
      await post(first.url, sampleCall({ call_id: 'nats-kill-warm' }));
      await until(async () => (await count()) === 1); // connected, stream made
      // From here the stream stores every publish but its acknowledgements never reach the receiver.
      proxy.holdReplies();
      const calls = 40;
      for (let i = 0; i < calls; i++)
        expect((await post(first.url, sampleCall({ call_id: `nats-kill-${i}` }))).status).toBe(200);
      await until(async () => (await count()) === 1 + concurrency);
      first.child.kill('SIGKILL');
      await first.exited;
      expect(deliveryStates(dataDir, 'bus').done).toBe(1);

      proxy.passReplies();
      const second = await spawnServer(dataDir, env);
      await until(() => deliveryStates(dataDir, 'bus').done === 1 + calls, { timeoutMs: 30_000 });
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      const keys = (await nats.messages(stream)).map((m) => m.msgId);
      // Without Nats-Msg-Id, the 16 publishes in flight at the kill would each be in the stream twice.
      expect(keys).toHaveLength(1 + calls);
      expect(new Set(keys).size).toBe(1 + calls);
    } finally {
      await proxy.close();
    }
  });
});
