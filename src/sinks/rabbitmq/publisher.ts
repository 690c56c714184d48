import amqp, { type ChannelModel, type ConfirmChannel, type Message } from 'amqplib';
import type { Logger } from 'pino';
import { PermanentError, RetryableError } from '../errors.js';
import { lazyConnection } from '../shared/lazy-connection.js';

/**
 * One connection and one confirm channel to RabbitMQ, opened by the first publish (never at start-up: a broker that is
 * down must not stop it, docs/reference.md#queues-and-databases), reused by every delivery, and opened again by the
 * next publish after either one closed. A publish succeeds only on the broker's confirm of a message it routed.
 */

export interface Outgoing {
  exchange: string;
  routingKey: string;
  content: Buffer;
  messageId: string;
  attempt: number;
  hook: string;
}

export interface Publisher {
  publish(message: Outgoing, signal: AbortSignal): Promise<void>;
  /** Connects and declares the queue, as the first publish would. */
  connect(): Promise<void>;
  close(): Promise<void>;
}

export interface PublisherOptions {
  url: string;
  exchange: string;
  /**
   * Declared durable before the first publish on a connection, and again after a message came back unroutable
   * (the queue deleted under the sink); on a named exchange bound with each routing key the sink publishes with.
   */
  queue: string | undefined;
  /** Shown to operators in the broker's connection list. */
  connectionName: string;
  log: Logger;
}

/** Without it a broker that accepts the TCP connection and never answers would hold the delivery until its timeout. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * AMQP reply codes (AMQP 0-9-1 section 1.2, "Constants") for which the same publish fails again however often it
 * is tried: content too large, access refused, not found (a missing exchange), precondition failed (a queue
 * declared with other arguments). Everything else (a connection lost, forced closed, an internal error) may pass.
 */
const PERMANENT_CODES = new Set([311, 403, 404, 406]);

interface Open {
  connection: ChannelModel;
  channel: ConfirmChannel;
  /** What the broker said when it closed the channel, read by the publishes its close fails. */
  closedBy: Error | undefined;
  /** The queue's declaration on this connection, made once and shared; forgotten when a message came back. */
  declared: Promise<void> | undefined;
  /** Routing keys the queue is bound with already, on this connection. */
  bound: Set<string>;
}

interface Pending {
  /** The broker's basic.return for this publish: `312 NO_ROUTE`. */
  returned: string | undefined;
}

export function createPublisher({ url, exchange, queue, connectionName, log }: PublisherOptions): Publisher {
  /**
   * Publishes awaiting their confirm, by message id and attempt. RabbitMQ sends a mandatory message's basic.return
   * before its basic.ack ("Publisher Confirms", https://www.rabbitmq.com/docs/confirms#when-publishes-are-confirmed),
   * so a return marks its publish here before the confirm settles it.
   */
  const pending = new Map<string, Pending[]>();
  const keyOf = (messageId: unknown, attempt: unknown) => `${String(messageId)}\n${String(attempt)}`;

  function onReturn(message: Message): void {
    const { messageId, headers } = message.properties;
    const waiting = pending.get(keyOf(messageId, headers?.['x-callhook-attempt']));
    // A redelivery may publish the same id and attempt while one is in flight: the two are the same message to
    // the same place, so the first still unmarked takes the return.
    const entry = waiting?.find((p) => p.returned === undefined);
    // amqplib types a return's fields as a delivery's; basic.return carries reply-code and reply-text (AMQP 0-9-1).
    const { replyCode, replyText } = message.fields as unknown as { replyCode: number; replyText: string };
    if (entry) entry.returned = `${replyCode} ${replyText}`;
  }

  /** One connection and its confirm channel, given up (`connections.drop`) once either one closed. */
  async function open(): Promise<Open> {
    const connection = await amqp.connect(url, {
      timeout: CONNECT_TIMEOUT_MS,
      clientProperties: { connection_name: connectionName },
    });
    // An 'error' without a listener would throw from the emitter and end the process.
    connection.on('error', (err: Error) => log.warn({ error: brokerText(err) }, 'RabbitMQ connection failed'));
    try {
      const channel = await connection.createConfirmChannel();
      const opened: Open = { connection, channel, closedBy: undefined, declared: undefined, bound: new Set() };
      connection.on('close', () => void connections.drop(opened));
      channel.on('error', (err: Error) => (opened.closedBy = err));
      // A channel the broker closed (a missing exchange) is gone with its connection: the next publish opens both.
      channel.on('close', () => void connections.drop(opened));
      channel.on('return', onReturn);
      // Passive: the sink never creates an exchange, and a missing one is a configuration error (section 9).
      if (exchange !== '') await channel.checkExchange(exchange);
      return opened;
    } catch (err) {
      // The broker's reply to the check or the declaration says more than the channel's close does.
      await connection.close().catch(() => undefined);
      throw err;
    }
  }

  // Opened by the first publish, shared, and opened again by the next publish after it closed (lazy-connection.ts).
  const connections = lazyConnection<Open>({ open, close: ({ connection }) => connection.close() });

  /**
   * The queue in place for a publish with `routingKey` (none: the declaration alone). Declared once per connection,
   * by the first publish that needs it, and again after `forgetQueue`: a queue deleted while the sink runs
   * (`rabbitmqctl delete_queue`) would otherwise return every later message as unroutable until the retries ran out.
   */
  async function prepare(state: Open, routingKey?: string): Promise<void> {
    if (queue === undefined) return;
    state.declared ??= state.channel.assertQueue(queue, { durable: true }).then(
      () => undefined,
      (err: unknown) => {
        state.declared = undefined;
        throw err;
      },
    );
    await state.declared;
    if (exchange === '' || routingKey === undefined || state.bound.has(routingKey)) return;
    // The routing key is a template: each key it renders is bound when first used, which routes it to the queue
    // on a direct or topic exchange alike (binding again is a no-op for the broker).
    await state.channel.bindQueue(queue, exchange, routingKey);
    state.bound.add(routingKey);
  }

  /**
   * A message came back although the sink declares its queue: the queue (and with it its bindings) was deleted, or
   * a binding removed. The next publish declares and binds again, as the nats sink looks for its stream again.
   */
  function forgetQueue(state: Open): void {
    state.declared = undefined;
    state.bound.clear();
  }

  /** The connection with the queue in place (and bound with `routingKey`, when given). */
  async function connected(routingKey?: string): Promise<Open> {
    try {
      const state = await connections.get();
      await prepare(state, routingKey);
      return state;
    } catch (err) {
      throw asDeliveryError(err, 'connecting');
    }
  }

  async function publish(message: Outgoing, signal: AbortSignal): Promise<void> {
    const state = await connected(message.routingKey);
    // An attempt given up on (timed out) while connecting publishes nothing: it would only be one copy more.
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const key = keyOf(message.messageId, message.attempt);
      const entry: Pending = { returned: undefined };
      pending.set(key, [...(pending.get(key) ?? []), entry]);
      const settle = (err: unknown) => {
        const left = pending.get(key)?.filter((p) => p !== entry) ?? [];
        if (left.length > 0) pending.set(key, left);
        else pending.delete(key);
        if (err) reject(asDeliveryError(state.closedBy ?? err, 'publishing'));
        else if (entry.returned !== undefined) {
          if (queue !== undefined) forgetQueue(state);
          reject(new RetryableError(unroutable(message, entry.returned)));
        } else resolve();
      };
      try {
        state.channel.publish(
          message.exchange,
          message.routingKey,
          message.content,
          {
            persistent: true,
            // Section 9: a message no queue takes comes back (basic.return) instead of being dropped.
            mandatory: true,
            contentType: 'application/json',
            messageId: message.messageId,
            headers: { 'x-callhook-hook': message.hook, 'x-callhook-attempt': message.attempt },
          },
          settle,
        );
      } catch (err) {
        settle(err);
      }
    });
  }

  return { publish, connect: async () => void (await connected()), close: () => connections.close() };
}

function unroutable(message: Outgoing, returned: string): string {
  const exchange = message.exchange === '' ? 'the default exchange' : `exchange "${message.exchange}"`;
  return `RabbitMQ returned the message as unroutable (${returned}): ${exchange} routes routing key "${message.routingKey}" to no queue`;
}

/**
 * The broker's own words with its reply code, which amqplib puts in the message; never the URL, which holds the
 * password. A nack (the broker could not take the message) and a lost connection are retried.
 */
function asDeliveryError(err: unknown, doing: string): RetryableError | PermanentError {
  if (err instanceof RetryableError || err instanceof PermanentError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  const message = `RabbitMQ ${doing}: ${brokerText(err)}`;
  if (typeof code === 'number' && PERMANENT_CODES.has(code)) return new PermanentError(message, { cause: err });
  return new RetryableError(message, { cause: err });
}

/** Node reports a refused connection to a name with several addresses as an AggregateError with no message. */
function brokerText(err: unknown): string {
  if (err instanceof AggregateError && err.message === '' && err.errors[0] instanceof Error)
    return err.errors[0].message;
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return err.message === '' && typeof code === 'string' ? code : err.message;
}
