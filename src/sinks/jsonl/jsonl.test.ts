import { readFileSync, writeFileSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { tempDir } from '../../../test/helpers/server.js';
import type { CallRecord } from '../../record.js';
import { jsonlSink } from './jsonl.js';

const log = pino({ level: 'silent' });
const record = (id: string): CallRecord => ({
  id,
  hook: 'end-of-call',
  dedup_key: `call_id:${id}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha' },
  extra: {},
  problems: [],
});
const context = { attempt: 1, idempotencyKey: 'x', signal: new AbortController().signal, log };
const open = (dir: string, path?: string) =>
  jsonlSink.open(jsonlSink.options.parse({ path }), { name: 'jsonl', dataDir: dir, log });
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('jsonl sink', () => {
  it('appends one line per record, in the record shape, to data/calls.jsonl by default', async () => {
    const dir = tempDir();
    const sink = await open(dir);
    await Promise.all(['a', 'b', 'c'].map((id) => sink.deliver(record(id), context)));
    await sink.close?.();
    expect(lines(join(dir, 'calls.jsonl'))).toEqual([record('a'), record('b'), record('c')]);
  });

  it('writes a record delivered twice only once, also across a restart', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.deliver(record('a'), context);
    await first.deliver(record('a'), context);
    await first.close?.();
    const second = await open(dir);
    await second.deliver(record('a'), { ...context, attempt: 2 });
    await second.deliver(record('b'), context);
    await second.close?.();
    expect(lines(join(dir, 'calls.jsonl')).map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('writes a line per revision: an edited record is another line, each written once, also across a restart (docs/reference.md#sinks-and-delivery)', async () => {
    const dir = tempDir();
    const edited = { ...record('a'), revision: 2, data: { first_name: 'Asha Rao' } };
    const first = await open(dir);
    await first.deliver(record('a'), context);
    await first.deliver(edited, context);
    await first.close?.();
    const second = await open(dir);
    await second.deliver(edited, { ...context, attempt: 2 });
    await second.deliver(record('a'), context);
    await second.deliver({ ...edited, revision: 3 }, context);
    await second.close?.();
    expect(lines(join(dir, 'calls.jsonl')).map((r) => [r.id, r.revision])).toEqual([
      ['a', 1],
      ['a', 2],
      ['a', 3],
    ]);
  });

  it('drops a line torn by a crash, so the record is written again whole', async () => {
    const dir = tempDir();
    const path = join(dir, 'out.jsonl');
    writeFileSync(path, `${JSON.stringify(record('a'))}\n${JSON.stringify(record('b')).slice(0, 30)}`);
    const sink = await open(dir, path);
    await sink.deliver(record('b'), context);
    await sink.close?.();
    expect(lines(path).map((r) => r.id)).toEqual(['a', 'b']);
  });
});

describe('jsonl sink batching', () => {
  it('writes many concurrent deliveries, each once, in arrival order', async () => {
    const dir = tempDir();
    const sink = await open(dir);
    const ids = Array.from({ length: 500 }, (_, i) => `r${String(i).padStart(3, '0')}`);
    await Promise.all([...ids, ...ids.slice(0, 50)].map((id) => sink.deliver(record(id), context)));
    await sink.close?.();
    expect(lines(join(dir, 'calls.jsonl')).map((r) => r.id)).toEqual(ids);
  });

  it('gives the deliveries made in one turn one datasync', async () => {
    const dir = tempDir();
    const sink = await open(dir);
    // FileHandle is not exported; its prototype is reached through a handle.
    const probe = await openFile(join(dir, 'probe'), 'w');
    const prototype = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const datasync = vi.spyOn(prototype, 'datasync');
    try {
      await Promise.all(['a', 'b', 'c', 'd'].map((id) => sink.deliver(record(id), context)));
      expect(datasync).toHaveBeenCalledTimes(1);
    } finally {
      datasync.mockRestore();
      await sink.close?.();
    }
    expect(lines(join(dir, 'calls.jsonl')).map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
  });
});
