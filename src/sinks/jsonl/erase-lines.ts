import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';

/**
 * The `jsonl` sink's part of a person's erasure (docs/reference.md#erasure): the file is copied beside itself without
 * the lines of the erased records and renamed over the old one. The copy streams the file a chunk at a time, so a file
 * of any size costs one chunk of memory; a line is parsed only when an `"id"` in it holds one of the ids, so the lines
 * of everyone else are copied as the bytes they are.
 */

/** How much of the file is read at a time. */
const CHUNK_BYTES = 1024 * 1024;

export interface LineFilter {
  /** The kept bytes of the complete lines in `chunk`; a line's start waits in the filter for its end. */
  take(chunk: Buffer): Buffer[];
  /** What follows the last newline (a torn last line), kept as it is unless it is a whole erased record. */
  rest(): Buffer[];
  /** Lines removed so far. */
  readonly removed: number;
  /** Lines kept that name an erased id but are not JSON (torn or edited by hand): the operator should look. */
  readonly unreadable: number;
}

export function lineFilter(ids: ReadonlySet<string>): LineFilter {
  // Each id as JSON.stringify writes it inside a string, which is how it appears in the line of its record.
  const written = new Set([...ids].map((id) => JSON.stringify(id).slice(1, -1)));
  let pending: Buffer[] = [];
  let removed = 0;
  let unreadable = 0;

  /** Whether the line (with or without its newline) is the line of an erased record. */
  const erased = (line: Buffer): boolean => {
    if (!namesOneOf(line, written)) return false;
    const id = recordId(line);
    if (id === undefined) unreadable++;
    return id !== undefined && ids.has(id);
  };

  return {
    take(chunk) {
      const kept: Buffer[] = [];
      let start = 0;
      for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
        const piece = chunk.subarray(start, newline + 1);
        const line = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        if (erased(line)) removed++;
        else kept.push(line);
        start = newline + 1;
      }
      // The chunk's buffer is read into again: the start of the next line is copied out of it.
      if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
      return kept;
    },
    rest() {
      const line = Buffer.concat(pending);
      pending = [];
      if (line.length === 0) return [];
      if (erased(line)) {
        removed++;
        return [];
      }
      return [line];
    },
    get removed() {
      return removed;
    },
    get unreadable() {
      return unreadable;
    },
  };
}

const ID_KEY = Buffer.from('"id"');
const [QUOTE, BACKSLASH, COLON] = [0x22, 0x5c, 0x3a];
const isSpace = (byte: number | undefined) => byte === 0x20 || byte === 0x09 || byte === 0x0d;

/**
 * Whether some `"id": "…"` in the line has one of these values (as written in JSON): a scan for one short pattern,
 * where looking for each id in turn would cost a person's hundreds of calls times every line. It may also meet an
 * `id` nested deeper in a record, which is why a line it finds is parsed before it is removed.
 */
function namesOneOf(line: Buffer, values: ReadonlySet<string>): boolean {
  for (let at = line.indexOf(ID_KEY); at !== -1; at = line.indexOf(ID_KEY, at + 1)) {
    let i = at + ID_KEY.length;
    while (isSpace(line[i])) i++;
    if (line[i++] !== COLON) continue;
    while (isSpace(line[i])) i++;
    if (line[i++] !== QUOTE) continue;
    const start = i;
    while (i < line.length && line[i] !== QUOTE) i += line[i] === BACKSLASH ? 2 : 1;
    if (values.has(line.toString('utf8', start, i))) return true;
  }
  return false;
}

function recordId(line: Buffer): string | undefined {
  try {
    const value = JSON.parse(line.toString('utf8')) as { id?: unknown } | null;
    return typeof value?.id === 'string' ? value.id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Copies bytes `from`…`to` of `source` through the filter to the end of `target` (opened for appending). Stops with
 * the signal's reason when it is aborted, between chunks.
 */
export async function copyFiltered(
  source: FileHandle,
  from: number,
  to: number,
  filter: LineFilter,
  target: FileHandle,
  signal: AbortSignal,
): Promise<void> {
  const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(1, to - from)));
  for (let position = from; position < to; ) {
    signal.throwIfAborted();
    const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, to - position), position);
    // The file is never cut below `to` while this runs (jsonl.ts): a short read is the end of what there is.
    if (bytesRead === 0) break;
    position += bytesRead;
    await append(target, filter.take(buffer.subarray(0, bytesRead)));
  }
}

/** Writes the pieces at the end of `target`; appendFile writes all of it, however many writes that takes. */
export async function append(target: FileHandle, pieces: Buffer[]): Promise<void> {
  if (pieces.length > 0) await target.appendFile(pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces));
}

/** The new name survives a power cut only once the folder that holds it is on disk. */
export async function syncFolder(folder: string): Promise<void> {
  // A folder cannot be opened for its sync on Windows, which needs no sync for a rename to hold.
  if (process.platform === 'win32') return;
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
