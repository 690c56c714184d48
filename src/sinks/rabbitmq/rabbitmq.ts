import { PermanentError } from '../errors.js';
import { defineSinkType } from '../sink.js';
import { MAX_NAME_BYTES, rabbitmqOptions } from './options.js';
import { createPublisher } from './publisher.js';

/**
 * Publishes each record as JSON to a RabbitMQ exchange (docs/reference.md#queues-and-databases): a persistent message
 * published `mandatory` on a confirm channel, counted as delivered only on the broker's confirm of a message it routed.
 * RabbitMQ cannot drop repeats, so this is at least once: every copy of a delivery carries the same `message_id`, the
 * idempotency key (`<record id>:<sink>`, `:r<revision>` after an edit, section 5), for consumers to drop by.
 *
 * `url` holds the broker's password: it is a secret by the URL rule (secret-values.ts), and no error here
 * ever quotes it.
 */
export const rabbitmqSink = defineSinkType({
  type: 'rabbitmq',
  options: rabbitmqOptions,
  open({ url, exchange, queue, routingKey, routing_key: routingKeyText }, { name, log }) {
    // Nothing is opened here: a broker that is down at start-up must not stop start-up (section 9).
    const publisher = createPublisher({ url, exchange, queue, connectionName: `callhook sink ${name}`, log });
    return {
      async deliver(record, { attempt, idempotencyKey, signal }) {
        const key = routingKey(record);
        if (Buffer.byteLength(key) > MAX_NAME_BYTES) {
          // The same record renders the same key on every attempt: it can never be published.
          throw new PermanentError(
            `routing_key "${routingKeyText}" renders a key longer than ${MAX_NAME_BYTES} bytes for this record, more than AMQP carries`,
          );
        }
        await publisher.publish(
          {
            exchange,
            routingKey: key,
            content: Buffer.from(JSON.stringify(record)),
            messageId: idempotencyKey,
            attempt,
            hook: record.hook,
          },
          signal,
        );
      },
      probe: () => publisher.connect(),
      close: () => publisher.close(),
    };
  },
});

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default rabbitmqSink;
