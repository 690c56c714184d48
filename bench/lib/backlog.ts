import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { newId } from '../../src/ids.js';
import { compileParameters, contentHash, dedupKey, normalize, RECOMMENDED_PARAMETERS } from '../../src/normalize/index.js';
import type { CallRecord } from '../../src/record.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { CommitInput } from '../../src/store/store.js';
import { callFields } from './bodies.js';

/**
 * A backlog as a downtime of the sink would leave it: calls committed with an outbox row for `jsonl` each,
 * written through the store itself (not raw SQL) so the rows are exactly what `serve` would have written.
 */

/** Every backlog call's dedup key starts with this, so its line in the JSONL file can be told from intake's. */
export const BACKLOG_MARK = '"dedup_key":"call_id:backlog-';
/**
 * Commits issued before one await: a store that groups commits gets a whole batch to group, and one that
 * commits each call alone is not slowed by the bench's awaits.
 */
const BATCH = 1_000;

export async function createBacklog(dataDir: string, count: number, sink = 'jsonl'): Promise<void> {
  await seedStore(dataDir, count, (n) => callFields(`backlog-${String(n).padStart(7, '0')}`), [sink]);
}

/**
 * Commits `count` calls of the `end-of-call` hook, the nth with the fields `fieldsOf(n)` normalised as `serve`
 * would, and an outbox row for each of `sinks`.
 */
export async function seedStore(dataDir: string, count: number, fieldsOf: (n: number) => Record<string, string>, sinks: string[]): Promise<void> {
  const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
  const parameters = compileParameters(RECOMMENDED_PARAMETERS, { region: 'IN' });
  try {
    for (let start = 0; start < count; start += BATCH) {
      const commits: Promise<unknown>[] = [];
      for (let n = start; n < Math.min(count, start + BATCH); n++) commits.push(store.commitCall(storedCall(fieldsOf(n), parameters, sinks)));
      await Promise.all(commits);
    }
  } finally {
    await store.close();
  }
}

function storedCall(fields: Record<string, string>, parameters: ReturnType<typeof compileParameters>, sinks: string[]): CommitInput {
  const { data, extra, problems } = normalize(fields, parameters);
  const now = new Date();
  const record: CallRecord = {
    id: newId(now.getTime()),
    hook: 'end-of-call',
    dedup_key: dedupKey(['call_id', 'recording_url'], data, extra),
    received_at: now.toISOString(),
    source: 'webhook', revision: 1,
    data,
    extra,
    problems,
  };
  const body = JSON.stringify(fields);
  return {
    record,
    contentHash: contentHash(data, extra),
    onConflict: 'keep',
    status: 'accepted',
    raw: { method: 'POST', content_type: 'application/json', query: {}, body },
    sinks,
    receipt: { hook: 'end-of-call', receivedAt: record.received_at, method: 'POST', contentType: 'application/json', size: Buffer.byteLength(body) },
  };
}

/**
 * Counts backlog lines in a JSONL file that keeps growing, reading only what was appended since the last call:
 * rereading a file of 100 MB four times a second would slow the very process that measures intake latency.
 */
export function backlogCounter(file: string): () => Promise<number> {
  let offset = 0;
  let partial = '';
  let seen = 0;
  return async () => {
    let handle;
    try {
      handle = await open(file, 'r');
    } catch {
      return seen; // the sink has not created it yet
    }
    try {
      const { size } = await handle.stat();
      if (size <= offset) return seen;
      const buffer = Buffer.alloc(size - offset);
      await handle.read(buffer, 0, buffer.length, offset);
      offset = size;
      const lines = (partial + buffer.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.includes(BACKLOG_MARK)) seen++;
      return seen;
    } finally {
      await handle.close();
    }
  };
}
