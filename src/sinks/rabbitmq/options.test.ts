import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../record.js';
import { resolveSinks } from '../registry.js';
import { rabbitmqOptions } from './options.js';

/**
 * The `rabbitmq` sink's options (docs/reference.md#queues-and-databases): defaults, refusals naming the option, the
 * default-exchange rule.
 */

const record: CallRecord = {
  id: '01J0000000000000000000000A',
  hook: 'end-of-call',
  dedup_key: 'call_id:c1',
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { call_outcome: 'order placed', call_duration: 184 },
  extra: {},
  problems: [],
};

/** The message start-up stops with, as the registry words it. */
async function refusal(options: Record<string, unknown>): Promise<string> {
  const err = await resolveSinks([{ name: 'rabbit', type: 'rabbitmq', ...options }]).then(
    () => undefined,
    (e: Error) => e,
  );
  return err?.message ?? 'accepted';
}

describe('rabbitmq sink options', () => {
  it('defaults to guest on this machine, the default exchange and callhook.<hook> as the routing key', () => {
    const options = rabbitmqOptions.parse({});
    expect(options).toMatchObject({
      url: 'amqp://guest:guest@127.0.0.1:5672',
      exchange: '',
      queue: undefined,
      routing_key: 'callhook.{{ hook }}',
    });
    expect(options.routingKey(record)).toBe('callhook.end-of-call');
  });

  it('renders a routing key template per record, a number as text', () => {
    const options = rabbitmqOptions.parse({ exchange: 'calls', routing_key: 'calls.{{ hook }}.{{ call_outcome }}' });
    expect(options.routingKey(record)).toBe('calls.end-of-call.order placed');
    expect(rabbitmqOptions.parse({ exchange: 'calls', routing_key: '{{ call_duration }}' }).routingKey(record)).toBe(
      '184',
    );
    expect(rabbitmqOptions.parse({ exchange: 'calls', routing_key: '{{ data.missing }}' }).routingKey(record)).toBe('');
  });

  it('binds a queue on a named exchange with any routing key template', () => {
    const options = rabbitmqOptions.parse({ exchange: 'calls', queue: 'crm', routing_key: 'calls.{{ hook }}' });
    expect(options).toMatchObject({ exchange: 'calls', queue: 'crm' });
    expect(options.routingKey(record)).toBe('calls.end-of-call');
  });

  it('on the default exchange with a queue, publishes to that queue by its name when routing_key is left out', () => {
    const options = rabbitmqOptions.parse({ queue: 'crm-calls' });
    expect(options).toMatchObject({ exchange: '', queue: 'crm-calls', routing_key: 'crm-calls' });
    expect(options.routingKey(record)).toBe('crm-calls');
    expect(rabbitmqOptions.parse({ queue: 'crm-calls', routing_key: 'crm-calls' }).routingKey(record)).toBe(
      'crm-calls',
    );
  });

  it('on the default exchange with a queue, refuses a routing key that can render another name, naming routing_key', async () => {
    // Any placeholder renders per record, even one whose value today happens to be the queue's name.
    for (const routing_key of ['callhook.{{ hook }}', '{{ hook }}', 'other-queue', 'crm-calls ', '']) {
      expect(await refusal({ queue: 'crm-calls', routing_key })).toMatch(
        /^sinks\[0\] \(rabbit\)\.routing_key: routing_key must be the queue's name "crm-calls"/,
      );
    }
    expect(await refusal({ exchange: '', queue: 'end-of-call', routing_key: '{{ hook }}' })).toMatch(/\.routing_key: /);
  });

  it('refuses bad options at start-up naming the option, never echoing the URL', async () => {
    expect(await refusal({ url: 'http://guest:s3cret@127.0.0.1:5672' })).toBe(
      'sinks[0] (rabbit).url: url must be an amqp:// or amqps:// URL',
    );
    expect(await refusal({ url: 'not a url s3cret' })).not.toContain('s3cret');
    expect(await refusal({ exchange: 'calls', routing_key: 'calls.{{ nosuch.field }}' })).toMatch(
      /^sinks\[0\] \(rabbit\)\.routing_key: .*unknown root "nosuch"/,
    );
    expect(await refusal({ queue: '' })).toBe('sinks[0] (rabbit).queue: queue must not be empty');
    expect(await refusal({ queue: 'amq.calls' })).toMatch(/^sinks\[0\] \(rabbit\)\.queue: .*amq\./);
    expect(await refusal({ exchange: 'x'.repeat(256) })).toMatch(/^sinks\[0\] \(rabbit\)\.exchange: .*255 bytes/);
    expect(await refusal({ exchange: 'calls', topic: 'x' })).toBe('sinks[0] (rabbit).topic: unknown option');
  });

  it('accepts amqps and a vhost, and is a known sink type', async () => {
    expect(rabbitmqOptions.parse({ url: 'amqps://user:pw@broker.example:5671/prod' }).url).toBe(
      'amqps://user:pw@broker.example:5671/prod',
    );
    expect(await refusal({ exchange: 'calls', queue: 'crm' })).toBe('accepted');
  });
});
