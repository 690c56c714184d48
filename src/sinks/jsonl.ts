import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { defineSinkType } from './sink.js';

/** How much of the file's end is read at start-up to learn which records a killed process already wrote. */
const TAIL_BYTES = 4 * 1024 * 1024;
/** How many written ids are remembered; a repeat can only come from the tail, so this bounds memory. */
const REMEMBERED_IDS = 100_000;

/**
 * Appends each record as one JSON line and syncs it to disk before the delivery counts as done.
 * The file holds exactly one line per record (contract section 3): delivery is at least once, so a record
 * written just before a crash is delivered again after the restart, and is recognised and skipped here.
 */
export const jsonlSink = defineSinkType({
  options: z.strictObject({
    path: z.string().min(1).optional(),
  }),
  async create({ path }, { dataDir }) {
    const file = resolve(path ?? resolve(dataDir, 'calls.jsonl'));
    await mkdir(dirname(file), { recursive: true });
    const handle = await open(file, 'a+');
    const written = await recoverTail(handle);
    let queue = Promise.resolve();

    const append = async (id: string, line: string): Promise<void> => {
      if (written.has(id)) return;
      await handle.appendFile(line);
      await handle.datasync();
      remember(written, id);
    };

    return {
      // Appends are chained so concurrent deliveries never interleave their lines.
      deliver(record) {
        const next = queue.then(() => append(record.id, `${JSON.stringify(record)}\n`));
        queue = next.catch(() => undefined);
        return next;
      },
      async close() {
        await queue;
        await handle.close();
      },
    };
  },
});

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
  for (const line of buffer.subarray(0, lastNewline + 1).toString('utf8').split('\n')) {
    const id = idOf(line);
    if (id) remember(ids, id);
  }
  return ids;
}

function idOf(line: string): string | undefined {
  try {
    const value = JSON.parse(line) as { id?: unknown };
    return typeof value?.id === 'string' ? value.id : undefined;
  } catch {
    return undefined;
  }
}

function remember(ids: Set<string>, id: string): void {
  ids.add(id);
  if (ids.size > REMEMBERED_IDS) ids.delete(ids.values().next().value!);
}
