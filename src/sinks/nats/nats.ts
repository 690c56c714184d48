import { z } from 'zod';
import { PermanentError } from '../errors.js';
import { hostAndPort } from '../shared/address.js';
import { defineSinkType } from '../sink.js';
import { type Link, natsConnection, whileConnected } from './connection.js';
import { natsError } from './errors.js';
import { ensureStream, streamNameProblem } from './stream.js';
import { publishSubjectProblem, subjectSchema } from './subject.js';

/**
 * The `nats` sink (docs/reference.md#queues-and-databases): a JetStream publish of the record as JSON with the header
 * `Nats-Msg-Id: <idempotency key>`, so the stream drops a repeat within its duplicate window and the
 * at-least-once outbox becomes exactly once downstream. Success is the stream's acknowledgement; a `duplicate`
 * acknowledgement is success too (the stream holds the message already). The NATS client is loaded only when a
 * config names this type (registry.ts).
 */

export const DEFAULT_SERVER = 'nats://127.0.0.1:4222';
/** How long a publish waits for the stream's acknowledgement; the attempt's own `timeout` bounds it as well. */
const PUBLISH_TIMEOUT_MS = 10_000;

/** The URL the client makes of a server (`nats://host:port`, `tls://…` or a bare `host:port`), if any. */
function serverUrl(value: string): URL | undefined {
  const text = value.includes('://') ? value : `nats://${value}`;
  return !/\s/.test(value) && URL.canParse(text) ? new URL(text) : undefined;
}

/**
 * Credentials in a server URL are refused: this client does not send them (the server answers Authorization
 * Violation), and `token` and `pass` are where callhook knows a secret to mask (docs/reference.md#refused-requests).
 */
const server = z.string().superRefine((value, ctx) => {
  const url = serverUrl(value);
  if (!url || !['nats:', 'tls:'].includes(url.protocol) || url.hostname === '') {
    ctx.addIssue({
      code: 'custom',
      message: 'a server must be a NATS address such as nats://127.0.0.1:4222 (nats:// or tls://)',
    });
  } else if (url.username !== '' || url.password !== '') {
    ctx.addIssue({ code: 'custom', message: 'give credentials as token or user + pass, not in the server URL' });
  }
});

const options = z
  .strictObject({
    servers: z
      .union([server, z.array(server).min(1, { error: 'servers must name at least one server' })])
      .default(DEFAULT_SERVER),
    subject: subjectSchema,
    stream: z
      .string()
      .superRefine((name, ctx) => {
        const problem = streamNameProblem(name);
        if (problem) ctx.addIssue({ code: 'custom', message: `stream ${problem}` });
      })
      .optional(),
    token: z.string().min(1, { error: 'token must not be empty' }).optional(),
    user: z.string().min(1, { error: 'user must not be empty' }).optional(),
    pass: z.string().min(1, { error: 'pass must not be empty' }).optional(),
  })
  .superRefine((o, ctx) => {
    if (o.token !== undefined && (o.user !== undefined || o.pass !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['token'], message: 'give token or user + pass, not both' });
    }
    if ((o.user === undefined) !== (o.pass === undefined)) {
      const [missing, given] = o.user === undefined ? ['user', 'pass'] : ['pass', 'user'];
      ctx.addIssue({ code: 'custom', path: [missing], message: `${missing} is required with ${given}` });
    }
    // A stream callhook creates listens on the subject with each placeholder as `*`, which matches one whole token.
    if (o.stream !== undefined && !o.subject.wholeTokens) {
      ctx.addIssue({
        code: 'custom',
        path: ['subject'],
        message: 'with stream, each {{ … }} must be a whole token between dots, so the stream can listen on it as *',
      });
    }
  });

export const natsSink = defineSinkType({
  type: 'nats',
  options,
  secretOptions: ['token', 'pass'],
  open({ servers, subject, stream, token, user, pass }, { name, log }) {
    const list = typeof servers === 'string' ? [servers] : servers;
    // Host and port only, as every message names the servers.
    const where = list.map((s) => hostAndPort(serverUrl(s)!, { defaultPort: 4222 })).join(', ');
    const connection = natsConnection({ servers: list, token, user, pass, name: `callhook ${name}`, where, log });

    /** The connection with its stream in place; the stream is looked up once per connection, by one delivery. */
    async function ready(): Promise<Link> {
      const link = await connection.get().catch((err: unknown) => {
        throw natsError(err, `NATS at ${where}: cannot connect`, { noResponders: 'no responders' });
      });
      if (stream !== undefined) {
        link.stream ??= whileConnected(() => ensureStream(link.nc, stream, subject.filter), link).catch(
          (err: unknown) => {
            link.stream = undefined;
            throw natsError(err, `NATS at ${where}: stream ${stream}`, {
              noResponders: 'JetStream does not answer (is it enabled on the server and the account?)',
            });
          },
        );
        await link.stream;
      }
      return link;
    }

    return {
      async deliver(record, { idempotencyKey, log: attemptLog }) {
        const missing = subject.empty(record);
        if (missing !== undefined) {
          throw new PermanentError(
            `NATS subject: {{ ${missing} }} is empty for this record, and a subject token cannot be empty (a call with no ${missing} cannot go to this subject; leave such calls out with when)`,
          );
        }
        const target = subject.render(record);
        const problem = publishSubjectProblem(target);
        if (problem !== undefined) throw new PermanentError(`NATS subject "${target}" ${problem}`);
        const link = await ready();
        const data = JSON.stringify(record);
        // The client sets `Nats-Msg-Id` from msgID (JetStream's deduplication header).
        const ack = await whileConnected(
          () => link.js.publish(target, data, { msgID: idempotencyKey, timeout: PUBLISH_TIMEOUT_MS }),
          link,
        ).catch((err: unknown) => {
          const error = natsError(err, `NATS at ${where}: publish to ${target}`, {
            noResponders: `no JetStream stream listens on subject ${target} (create one whose subjects match it, or set the sink's stream option)`,
          });
          // The stream was deleted under us, say: a retry (by hand, as this one is dead) looks for it again.
          if (error instanceof PermanentError) link.stream = undefined;
          throw error;
        });
        if (ack.duplicate)
          attemptLog.debug(
            { stream: ack.stream, seq: ack.seq, idempotencyKey },
            'nats sink: the stream had this message already',
          );
      },
      async probe() {
        await ready();
      },
      close: () => connection.close(),
    };
  },
});

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default natsSink;
