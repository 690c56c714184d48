import { randomBytes } from 'node:crypto';
import { type JetStreamManager, jetstreamManager, type StreamConfig } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';

/**
 * A test's look at the machine's NATS JetStream, on a connection of its own: names with a random suffix (test
 * files run at once and share the server), the messages a stream holds, and every stream it made or was told of
 * deleted by close().
 */
export interface NatsAdmin {
  jsm: JetStreamManager;
  /** A stream name and a subject prefix no other test uses: `CALLHOOK_T_<suffix>`, `callhook-t-<suffix>`. */
  unique(): { stream: string; prefix: string };
  /** Creates a stream (the test's own, deleted by close()). */
  addStream(config: Partial<StreamConfig> & { name: string }): Promise<void>;
  /** Deletes this stream too at close(), for one the sink under test creates. */
  forget(stream: string): void;
  /** Every message the stream holds, in order, with its subject, its Nats-Msg-Id and its body as JSON. */
  messages(stream: string): Promise<{ subject: string; msgId: string | undefined; body: Record<string, unknown> }[]>;
  close(): Promise<void>;
}

export async function natsAdmin(url: string): Promise<NatsAdmin> {
  const nc: NatsConnection = await connect({ servers: url, timeout: 5_000 });
  const jsm = await jetstreamManager(nc);
  const streams = new Set<string>();
  return {
    jsm,
    unique() {
      const suffix = randomBytes(5).toString('hex');
      return { stream: `CALLHOOK_T_${suffix}`, prefix: `callhook-t-${suffix}` };
    },
    async addStream(config) {
      streams.add(config.name);
      await jsm.streams.add(config);
    },
    forget(stream) {
      streams.add(stream);
    },
    async messages(stream) {
      const { state } = await jsm.streams.info(stream);
      const out = [];
      for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq });
        if (m)
          out.push({
            subject: m.subject,
            msgId: m.header?.get('Nats-Msg-Id') || undefined,
            body: m.json<Record<string, unknown>>(),
          });
      }
      return out;
    },
    async close() {
      for (const stream of streams) await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
    },
  };
}
