import type { Redis } from 'ioredis';

/**
 * The `redis-stream` sink's part of a person's erasure (docs/reference.md#erasure): the stream entries of their records
 * and the markers kept beside them (append-once.ts). A stream has no index but its entry ids, so the stream is read
 * from end to end, a page at a time, and an entry is known by its `id` field (redis-stream.ts, entryFields). Markers
 * are named `<stream>:sent:<record id>:<sink>[:r<revision>]`: those the entries name are deleted with them, and those
 * that outlived their entry (trimmed by `maxlen`) are found by a SCAN of the stream's marker names.
 */

/** Entries read per XRANGE: each holds a record's JSON, a kilobyte or two. */
const PAGE = 500;
/** Keys looked at per SCAN step (a hint to Redis, which may answer with more or fewer). */
const SCAN_COUNT = 1000;
/** Ids per XDEL or DEL, so that no one command holds the server long. */
const BATCH = 500;

export interface EraseEntries {
  stream: string;
  recordIds: readonly string[];
  signal: AbortSignal;
}

/** Deletes the entries and their markers; resolves to how many entries it deleted. */
export async function eraseEntries(client: Redis, { stream, recordIds, signal }: EraseEntries): Promise<number> {
  const ids = new Set(recordIds);
  if (ids.size === 0) return 0;
  const entries: string[] = [];
  const markers = new Set<string>();
  // Exclusive ranges, `(<id>`, need Redis 6.2.
  for (let start = '-'; ; ) {
    signal.throwIfAborted();
    const page = await client.xrange(stream, start, '+', 'COUNT', PAGE);
    for (const [entryId, flat] of page) {
      const fields = fieldsOf(flat);
      if (!ids.has(fields.get('id') ?? '')) continue;
      entries.push(entryId);
      const key = fields.get('idempotency_key');
      if (key !== undefined) markers.add(`${stream}:sent:${key}`);
    }
    if (page.length < PAGE) break;
    start = `(${page[page.length - 1]![0]}`;
  }
  for (const marker of await outlivedMarkers(client, stream, ids, signal)) markers.add(marker);

  let deleted = 0;
  for (let i = 0; i < entries.length; i += BATCH) deleted += await client.xdel(stream, ...entries.slice(i, i + BATCH));
  const names = [...markers];
  for (let i = 0; i < names.length; i += BATCH) await client.del(...names.slice(i, i + BATCH));
  return deleted;
}

/**
 * The markers of these records, entry or not. A record id is a UUID, with no `:` in it, so it is the marker name's
 * part up to the next `:` after `<stream>:sent:`.
 */
async function outlivedMarkers(
  client: Redis,
  stream: string,
  ids: ReadonlySet<string>,
  signal: AbortSignal,
): Promise<string[]> {
  const prefix = `${stream}:sent:`;
  const found: string[] = [];
  let cursor = '0';
  do {
    signal.throwIfAborted();
    const [next, keys] = await client.scan(cursor, 'MATCH', `${globEscaped(prefix)}*`, 'COUNT', SCAN_COUNT);
    for (const key of keys) {
      const rest = key.slice(prefix.length);
      if (ids.has(rest.slice(0, rest.indexOf(':')))) found.push(key);
    }
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/** An XRANGE entry's flat `[field, value, field, value, …]` as a map. */
function fieldsOf(flat: string[]): Map<string, string> {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
  return fields;
}

/** A key name as a SCAN MATCH pattern that matches only itself: `*`, `?`, `[`, `]` and `\` escaped. */
function globEscaped(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
