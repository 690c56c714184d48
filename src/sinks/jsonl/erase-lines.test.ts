import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/server.js';
import type { CallRecord } from '../../record.js';
import type { Sink } from '../sink.js';
import { lineFilter } from './erase-lines.js';
import { jsonlSink } from './jsonl.js';

/**
 * A person's erasure in the `jsonl` sink (docs/reference.md#erasure): the file rewritten beside itself without the
 * erased records' lines and renamed over, while deliveries go on appending.
 */

const log = pino({ level: 'silent' });
const record = (id: string, over: Partial<CallRecord> = {}): CallRecord => ({
  id,
  hook: 'end-of-call',
  dedup_key: `call_id:${id}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  data: { first_name: 'Asha', phone_number: '+919812345678' },
  extra: {},
  problems: [],
  ...over,
});
const context = { attempt: 1, idempotencyKey: 'x', signal: new AbortController().signal, log };
const eraseContext = (signal = new AbortController().signal) => ({ signal, log });
const open = (dir: string, path?: string) =>
  jsonlSink.open(jsonlSink.options.parse({ path }), { name: 'jsonl', dataDir: dir, log });
const idsIn = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as CallRecord).id);
const id = (n: number) => `019a0000-0000-7000-8000-${String(n).padStart(12, '0')}`;

describe('jsonl sink erase', () => {
  it('removes every line of the erased records (each revision), keeps the others byte for byte, and counts the lines', async () => {
    const dir = tempDir();
    const path = join(dir, 'calls.jsonl');
    const sink = await open(dir);
    const [a, b, c, d] = [id(1), id(2), id(3), id(4)];
    // d's record names a in conflicts_with: it is d's line, and stays.
    for (const r of [record(a), record(b), record(a, { revision: 2 }), record(c), record(d, { conflicts_with: a })])
      await sink.deliver(r, context);
    const before = readFileSync(path, 'utf8').split('\n');

    expect(await sink.erase!([a, c, id(99)], eraseContext())).toBe(3);

    expect(readFileSync(path, 'utf8')).toBe(`${[before[1], before[4], ''].join('\n')}`);
    expect(idsIn(path)).toEqual([b, d]);
    // Same name, owner-only, and no copy left beside it.
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['calls.jsonl']);
    // Deliveries go on into the new file, a repeat of a kept record still recognised.
    await sink.deliver(record(id(5)), context);
    await sink.deliver(record(b), context);
    await sink.close!();
    expect(idsIn(path)).toEqual([b, d, id(5)]);
  });

  it('drops a delivery of an erased record that was still in flight, and writes the others', async () => {
    const dir = tempDir();
    const sink = await open(dir);
    await sink.deliver(record(id(1)), context);
    expect(await sink.erase!([id(1), id(2)], eraseContext())).toBe(1);
    // Attempts the worker had started before the store cancelled their deliveries, arriving after the erasure:
    // id(2) never reached the file, and id(1)'s edit is a line the file never had.
    for (const r of [record(id(2)), record(id(1), { revision: 2 }), record(id(3))]) await sink.deliver(r, context);
    await sink.close!();
    expect(idsIn(join(dir, 'calls.jsonl'))).toEqual([id(3)]);
  });

  it('erases nothing, and says 0, for records it never wrote', async () => {
    const dir = tempDir();
    const sink = await open(dir);
    await sink.deliver(record(id(1)), context);
    expect(await sink.erase!([id(2)], eraseContext())).toBe(0);
    expect(await sink.erase!([], eraseContext())).toBe(0);
    await sink.close!();
    expect(idsIn(join(dir, 'calls.jsonl'))).toEqual([id(1)]);
  });

  it('loses no line and writes none twice while another loop keeps delivering during the rewrite', async () => {
    const dir = tempDir();
    const path = join(dir, 'calls.jsonl');
    // A file big enough that its copy takes many chunks: 60,000 lines, every 100th of the person being erased.
    const erased: string[] = [];
    const lines: string[] = [];
    for (let n = 1; n <= 60_000; n++) {
      const r = record(id(n), { extra: { notes: 'x'.repeat(200) } });
      if (n % 100 === 0) erased.push(r.id);
      lines.push(`${JSON.stringify(r)}\n`);
    }
    writeFileSync(path, lines.join(''));
    const sink = await open(dir);

    let stop = false;
    const delivered: string[] = [];
    const during: string[] = [];
    let erasing = false;
    // Two loops, one delivering one at a time, one in bursts that share a write, as the worker's concurrency does.
    const loop = async (from: number, burst: number) => {
      for (let n = from; !stop; n += burst) {
        const batch = Array.from({ length: burst }, (_, i) => id(n + i));
        await Promise.all(batch.map((rid) => sink.deliver(record(rid), context)));
        delivered.push(...batch);
        if (erasing) during.push(...batch);
      }
    };
    const loops = [loop(1_000_000, 1), loop(2_000_000, 7)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    erasing = true;
    const removed = await sink.erase!(erased, eraseContext());
    erasing = false;
    await new Promise((resolve) => setTimeout(resolve, 20));
    stop = true;
    await Promise.all(loops);
    await sink.close!();

    expect(removed).toBe(600);
    // The test means something only if deliveries did land while the file was being rewritten.
    expect(during.length).toBeGreaterThan(10);
    const kept = lines.length - erased.length;
    const ids = idsIn(path);
    expect(ids).toHaveLength(kept + delivered.length);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((rid) => erased.includes(rid))).toEqual([]);
    expect(new Set(ids.slice(kept))).toEqual(new Set(delivered));
  });

  it('keeps a line that is not JSON as it is, also a torn last line, and warns of one that names an erased id', async () => {
    const dir = tempDir();
    const path = join(dir, 'calls.jsonl');
    const sink = await open(dir);
    await sink.deliver(record(id(1)), context);
    await sink.deliver(record(id(2)), context);
    // Written by hand after the sink opened (at start-up it cuts a torn last line).
    const odd = `${JSON.stringify(record(id(1))).slice(0, 60)}\n`;
    const torn = JSON.stringify(record(id(3))).slice(0, 40);
    appendFileSync(path, `${odd}${torn}`);
    const warnings: unknown[] = [];
    const warnLog = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });

    expect(await sink.erase!([id(1), id(3)], { signal: new AbortController().signal, log: warnLog })).toBe(1);

    await sink.close!();
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(record(id(2)))}\n${odd}${torn}`);
    expect(warnings).toEqual([expect.objectContaining({ lines: 1, msg: expect.stringMatching(/not JSON/) })]);
  });

  it('rewrites the file a symbolic link names, and leaves the link in place', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    const target = join(elsewhere, 'real.jsonl');
    writeFileSync(target, `${JSON.stringify(record(id(1)))}\n${JSON.stringify(record(id(2)))}\n`);
    const link = join(dir, 'calls.jsonl');
    symlinkSync(target, link);
    const sink = await open(dir, link);
    expect(await sink.erase!([id(1)], eraseContext())).toBe(1);
    await sink.deliver(record(id(3)), context);
    await sink.close!();
    expect(idsIn(target)).toEqual([id(2), id(3)]);
    expect(idsIn(link)).toEqual([id(2), id(3)]);
  });

  it('leaves the file as it was when the erasure is given up, and no copy beside it', async () => {
    const dir = tempDir();
    const path = join(dir, 'calls.jsonl');
    const sink: Sink = await open(dir);
    await sink.deliver(record(id(1)), context);
    const controller = new AbortController();
    controller.abort(new Error('shutting down'));
    await expect(sink.erase!([id(1)], eraseContext(controller.signal))).rejects.toThrow('shutting down');
    await sink.deliver(record(id(2)), context);
    await sink.close!();
    expect(idsIn(path)).toEqual([id(1), id(2)]);
    expect(existsSync(`${path}.erase.tmp`)).toBe(false);
  });

  it('removes at start-up a copy an erasure left when the process died', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'calls.jsonl.erase.tmp'), 'half a copy');
    const sink = await open(dir);
    await sink.close!();
    expect(readdirSync(dir)).toEqual(['calls.jsonl']);
  });
});

describe('jsonl line filter', () => {
  it('finds lines across chunk boundaries, whatever the chunk size', () => {
    const [a, b] = [id(1), id(2)];
    const text = [record(a), record(b), record(a, { revision: 2 })].map((r) => `${JSON.stringify(r)}\n`).join('');
    const bytes = Buffer.from(`${text}tail`);
    for (const size of [1, 7, 64, bytes.length]) {
      const filter = lineFilter(new Set([a]));
      const kept: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += size) {
        // The caller reads into one buffer again and again: the filter must not keep a view of it.
        const chunk = Buffer.from(bytes.subarray(at, at + size));
        kept.push(...filter.take(chunk).map((piece) => Buffer.from(piece)));
        chunk.fill(0);
      }
      kept.push(...filter.rest());
      expect(Buffer.concat(kept).toString(), `chunks of ${size}`).toBe(`${JSON.stringify(record(b))}\ntail`);
      expect(filter.removed).toBe(2);
    }
  });
});
