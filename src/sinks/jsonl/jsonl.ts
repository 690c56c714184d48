import { type FileHandle, open, realpath, rename, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { FILE_MODE, ownerOnlyFd, prepareFolderOf } from '../../data-dir.js';
import { serially } from '../shared/serially.js';
import { defineSinkType } from '../sink.js';
import { append, copyFiltered, lineFilter, syncFolder } from './erase-lines.js';

/** How much of the file's end is read at start-up to learn which records a killed process already wrote. */
const TAIL_BYTES = 4 * 1024 * 1024;
/** How many written ids are remembered; a repeat can only come from the tail, so this bounds memory. */
const REMEMBERED_IDS = 100_000;

/**
 * Appends each record as one JSON line and syncs it to disk before the delivery counts as done. The file holds exactly
 * one line per record and revision (docs/reference.md#normalising and docs/reference.md#sinks-and-delivery): delivery
 * is at least once, so a record written just before a crash is delivered again after the restart, and is recognised and
 * skipped here; an edited record (revision 2 and on) is another line.
 */
export const jsonlSink = defineSinkType({
  type: 'jsonl',
  // Appends are cheap and batched into one datasync each, so many at once drain a backlog fast; but every claimed
  // record is parsed and held on the event loop until its datasync, and the webhook replies wait behind it. For a
  // backlog of 100,000 with intake at 500 req/s (npm run bench, three runs each): 256 drained in 12.7 s with intake
  // p99 at 51 ms, 128 in 13.1 s at 38 ms, 64 in 17.4 s at 26 ms, 32 in 21.6 s at 24 ms. Full-speed intake is the
  // same at 64 as at 256.
  defaults: { concurrency: 64 },
  options: z.strictObject({
    path: z.string().min(1).optional(),
  }),
  async open({ path }, { dataDir }) {
    const file = resolve(path ?? resolve(dataDir, 'calls.jsonl'));
    // Owner-only, in the data dir or elsewhere (docs/reference.md#operating): the folder when callhook makes it, the
    // file whoever made it.
    prepareFolderOf(file, dataDir);
    let handle = await open(file, 'a+', FILE_MODE);
    try {
      ownerOnlyFd(handle.fd, file);
    } catch (err) {
      await handle.close();
      throw err;
    }
    const written = await recoverTail(handle);
    // A copy an erasure was making when the process died: the file itself is whole, the copy is only clutter.
    await rm(eraseCopyOf(await realpath(file)), { force: true });
    let waiting: { id: string; recordId: string; line: string; done: (err?: unknown) => void }[] = [];
    // Records erased from the file: a delivery of one that was already in flight is dropped, not written back.
    const erased = new Set<string>();
    let flushing: Promise<void> | undefined;
    // Appends and the last step of an erasure (copying what was appended meanwhile, the rename) take turns.
    const exclusive = serially();
    const oneErasure = serially();
    let erasing: Promise<unknown> = Promise.resolve();

    // Deliveries made in the same turn share one write and its one datasync (the flush starts once the turn's
    // code is done), and so do those that arrive while a write is in progress.
    const writeBatch = async (): Promise<void> => {
      const batch = waiting;
      waiting = [];
      const inBatch = new Set<string>();
      const fresh = batch.filter(
        ({ id, recordId }) => !written.has(id) && !erased.has(recordId) && !inBatch.has(id) && inBatch.add(id),
      );
      let size: number | undefined;
      try {
        ({ size } = await handle.stat());
        if (fresh.length > 0) {
          await handle.appendFile(fresh.map((w) => w.line).join(''));
          await handle.datasync();
        }
        for (const w of fresh) remember(written, w.id);
        for (const w of batch) w.done();
      } catch (err) {
        // Cut back whatever part of the batch did reach the file, so a retry never follows a torn line.
        if (size !== undefined) await handle.truncate(size).catch(() => undefined);
        for (const w of batch) w.done(err);
      }
    };
    const flush = async (): Promise<void> => {
      while (waiting.length > 0) await exclusive(writeBatch);
      flushing = undefined;
    };

    /**
     * docs/reference.md#erasure: the file without the erased records' lines, written beside it and renamed over it
     * while deliveries go on. The bulk is copied while appends continue; then appends wait while the little they
     * added meanwhile is copied and the copy takes the file's place, so no line is lost or written twice.
     */
    const eraseLines = async (ids: ReadonlySet<string>, signal: AbortSignal, log: Logger): Promise<number> => {
      // The file itself, when `path` is a symbolic link: renaming over the link would leave the lines where it points.
      const real = await realpath(file);
      const temp = eraseCopyOf(real);
      await rm(temp, { force: true });
      const copy = await open(temp, 'ax+', FILE_MODE);
      let replaced = false;
      try {
        ownerOnlyFd(copy.fd, temp);
        const filter = lineFilter(ids);
        // Taken between two appends: the bytes before it never change again (a failed append cuts back only to
        // its own start, which is later), so they are copied while deliveries go on.
        const settled = await exclusive(async () => (await handle.stat()).size);
        await copyFiltered(handle, 0, settled, filter, copy, signal);
        await exclusive(async () => {
          const { size } = await handle.stat();
          await copyFiltered(handle, settled, size, filter, copy, signal);
          await append(copy, filter.rest());
          signal.throwIfAborted();
          await copy.datasync();
          await rename(temp, real);
          replaced = true;
          const old = handle;
          // Opened for appending, the copy is now the file: the next batch appends to it.
          handle = copy;
          for (const id of ids) remember(erased, id);
          await old.close().catch(() => undefined);
          await syncFolder(dirname(real));
        });
        if (filter.unreadable > 0) {
          log.warn(
            { file, lines: filter.unreadable },
            'erasure kept lines that are not JSON but hold an erased record id (a torn or hand-edited line): look at them',
          );
        }
        return filter.removed;
      } finally {
        if (!replaced) {
          await copy.close().catch(() => undefined);
          await rm(temp, { force: true });
        }
      }
    };

    return {
      deliver(record) {
        return new Promise<void>((resolve, reject) => {
          waiting.push({
            id: lineKey(record),
            recordId: record.id,
            line: `${JSON.stringify(record)}\n`,
            done: (err) => (err ? reject(err) : resolve()),
          });
          flushing ??= Promise.resolve().then(flush);
        });
      },
      erase(recordIds, { signal, log }) {
        const ids = new Set(recordIds);
        const run = oneErasure(() => (ids.size === 0 ? Promise.resolve(0) : eraseLines(ids, signal, log)));
        erasing = run.catch(() => undefined);
        return run;
      },
      async close() {
        await erasing;
        await flushing;
        await handle.close();
      },
    };
  },
});

/** Where an erasure writes its copy: beside the file, so the rename stays on one file system. */
const eraseCopyOf = (real: string) => `${real}.erase.tmp`;

/** Drops a torn last line (the process died mid-write) and returns the ids of the complete lines at the end. */
async function recoverTail(handle: FileHandle): Promise<Set<string>> {
  const { size } = await handle.stat();
  const start = Math.max(0, size - TAIL_BYTES);
  const buffer = Buffer.alloc(size - start);
  await handle.read(buffer, 0, buffer.length, start);
  const lastNewline = buffer.lastIndexOf(0x0a);
  if (size > 0 && lastNewline !== buffer.length - 1) {
    // Its record was never marked delivered, so it is written again, whole, on the next attempt.
    await handle.truncate(start + lastNewline + 1);
    await handle.datasync();
  }
  const ids = new Set<string>();
  // The first line of the window may be cut; it fails to parse and is skipped.
  for (const line of buffer
    .subarray(0, lastNewline + 1)
    .toString('utf8')
    .split('\n')) {
    const id = idOf(line);
    if (id) remember(ids, id);
  }
  return ids;
}

/** What a line is recognised by: its record's id, and the revision of an edited one (as its idempotency key). */
const lineKey = ({ id, revision }: { id: string; revision?: unknown }) =>
  typeof revision === 'number' && revision > 1 ? `${id}:r${revision}` : id;

function idOf(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as { id?: unknown; revision?: unknown };
    return typeof value?.id === 'string' ? lineKey({ id: value.id, revision: value.revision }) : undefined;
  } catch {
    return undefined;
  }
}

function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  if (ids.size > REMEMBERED_IDS) ids.delete(ids.values().next().value!);
}

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default jsonlSink;
