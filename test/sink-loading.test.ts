import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { closedPort } from './helpers/server.js';

/**
 * Every sink's client library is loaded only when a configured sink uses it (docs/reference.md#queues-and-databases;
 * the registry imports a type's module only when a config names it, src/sinks/registry.ts). Seen from a fresh process
 * that serves a config, opens its sinks and delivers a call, with every package it loaded written down
 * (test/helpers/loaded-packages.ts). `pg` is left out: the PostgreSQL store uses it too.
 */

const QUEUE_CLIENTS = ['ioredis', 'amqplib', '@nats-io/transport-node', '@nats-io/jetstream'];

async function packagesLoadedBy(config: unknown): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'test/helpers/loaded-packages.ts', JSON.stringify(config)],
    { timeout: 30_000 },
  );
  return JSON.parse(stdout) as string[];
}

describe('a sink type and its client library are loaded only when a config names it', () => {
  it('loads none of the queue clients for a config of log and jsonl sinks', async () => {
    const loaded = await packagesLoadedBy({
      sinks: [
        { name: 'audit', type: 'log' },
        { name: 'file', type: 'jsonl' },
      ],
    });
    expect(loaded).toContain('pino'); // the list holds what was loaded
    expect(QUEUE_CLIENTS.filter((name) => loaded.includes(name))).toEqual([]);
    // The e-mail alert channel loads it with its first message (docs/reference.md#alerts).
    expect(loaded).not.toContain('nodemailer');
  });

  it('loads ioredis, and no other queue client, once a redis-stream sink is configured', async () => {
    // Nothing listens there: the sink cannot open, which does not stop start-up, and its library is loaded all the
    // same.
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const loaded = await packagesLoadedBy({
      sinks: [
        { name: 'audit', type: 'log' },
        { name: 'events', type: 'redis-stream', url },
      ],
    });
    expect(QUEUE_CLIENTS.filter((name) => loaded.includes(name))).toEqual(['ioredis']);
  });
});
