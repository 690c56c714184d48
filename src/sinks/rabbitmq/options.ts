import { z } from 'zod';
import { compileTextTemplate, type TextTemplate } from '../shared/template.js';

/**
 * The options of the `rabbitmq` sink (docs/reference.md#queues-and-databases), checked once at start-up: `url`,
 * `exchange`, `routing_key` (a template) and `queue`. The routing key comes out compiled, as a function of the record.
 */

export const DEFAULT_URL = 'amqp://guest:guest@127.0.0.1:5672';
export const DEFAULT_ROUTING_KEY = 'callhook.{{ hook }}';

/** AMQP 0-9-1 carries exchange, queue and routing key names as a `shortstr`: at most 255 bytes. */
export const MAX_NAME_BYTES = 255;

const name = (option: string) =>
  z.string().refine((value) => Buffer.byteLength(value) <= MAX_NAME_BYTES, {
    error: `${option} must be at most ${MAX_NAME_BYTES} bytes (an AMQP short string)`,
  });

/** Never echoes the value: the URL holds the broker's password. */
const url = z.string().refine((value) => URL.canParse(value) && /^amqps?:$/.test(new URL(value).protocol), {
  error: 'url must be an amqp:// or amqps:// URL',
});

const rawOptions = z.strictObject({
  url: url.default(DEFAULT_URL),
  /**
   * `""` is the default exchange, which routes a message to the queue its routing key names (AMQP 0-9-1 section
   * 3.1.3.1).
   */
  exchange: name('exchange').default(''),
  routing_key: z.string().optional(),
  queue: name('queue')
    .min(1, { error: 'queue must not be empty' })
    // RabbitMQ refuses to declare a queue whose name starts with amq. (403 ACCESS_REFUSED): say so at start-up.
    .refine((value) => !value.startsWith('amq.'), {
      error: 'queue must not start with "amq.", which RabbitMQ reserves',
    })
    .optional(),
});

export interface RabbitmqOptions {
  url: string;
  exchange: string;
  queue: string | undefined;
  /** The routing key as configured, or as it defaults (the option's name kept: it is what the user wrote). */
  routing_key: string;
  /** The routing key of one record. */
  routingKey: TextTemplate;
}

export const rabbitmqOptions = rawOptions.transform((options, ctx): RabbitmqOptions => {
  const { url, exchange, queue, routing_key: given } = options;
  if (exchange === '' && queue !== undefined) {
    // Section 9: on the default exchange the queue is the routing key's name, so a key that could render any
    // other name would publish past the declared queue (returned as unroutable, or into someone else's queue).
    // Any placeholder renders per record, so only the queue's own name, written as it is, can be the key;
    // left out, the key is that name.
    if (given !== undefined && given !== queue) {
      ctx.addIssue({
        code: 'custom',
        path: ['routing_key'],
        message: `routing_key must be the queue's name "${queue}" (or be left out) on the default exchange, which routes by queue name; a template or another name could route past the queue`,
      });
      return z.NEVER;
    }
    return { url, exchange, queue, routing_key: queue, routingKey: () => queue };
  }
  const text = given ?? DEFAULT_ROUTING_KEY;
  let routingKey: TextTemplate;
  try {
    // A routing key is text whatever a lone placeholder finds (a revision renders "2").
    routingKey = compileTextTemplate(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', path: ['routing_key'], message: (err as Error).message });
    return z.NEVER;
  }
  return { url, exchange, queue, routing_key: text, routingKey };
});
