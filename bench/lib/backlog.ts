import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { newId } from '../../src/ids.js';
import {
  compileParameters,
  contentHash,
  dedupKey,
  normalize,
  RECOMMENDED_PARAMETERS,
} from '../../src/normalize/index.js';
import type { CallRecord } from '../../src/record.js';
import type { CommitInput } from '../../src/store/calls.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { callFields } from './bodies.js';

/**
 * A backlog as a downtime of the sink would leave it: calls committed with an outbox row for `jsonl` each,
 * written through the store itself (not raw SQL) so the rows are exactly what `serve` would have written.
 */

/** Every backlog call's dedup key starts with this, so its record can be told from intake's in every sink. */
export const BACKLOG_KEY_PREFIX = 'call_id:backlog-';
/** The same, as it appears in the record's JSON (a line of the JSONL file, a stream entry, a message). */
export const BACKLOG_MARK = `"dedup_key":"${BACKLOG_KEY_PREFIX}`;
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
export async function seedStore(
  dataDir: string,
  count: number,
  fieldsOf: (n: number) => Record<string, string>,
  sinks: string[],
): Promise<void> {
  const store = openSqliteStore({ path: join(dataDir, SQLITE_FILE) });
  const parameters = compileParameters(RECOMMENDED_PARAMETERS, { region: 'IN' });
  try {
    for (let start = 0; start < count; start += BATCH) {
      const commits: Promise<unknown>[] = [];
      for (let n = start; n < Math.min(count, start + BATCH); n++)
        commits.push(store.commitCall(storedCall(fieldsOf(n), parameters, sinks)));
      await Promise.all(commits);
    }
  } finally {
    await store.close();
  }
}

/** A call as intake would commit it, received at `at`: the backlog's now, the retention's old calls days before. */
export function storedCall(
  fields: Record<string, string>,
  parameters: ReturnType<typeof compileParameters>,
  sinks: string[],
  at = new Date(),
): CommitInput {
  const { data, extra, problems } = normalize(fields, parameters);
  const record: CallRecord = {
    id: newId(at.getTime()),
    hook: 'end-of-call',
    dedup_key: dedupKey(['call_id', 'recording_url'], data, extra),
    received_at: at.toISOString(),
    source: 'webhook',
    revision: 1,
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
    receipt: {
      hook: 'end-of-call',
      receivedAt: record.received_at,
      method: 'POST',
      contentType: 'application/json',
      size: Buffer.byteLength(body),
    },
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
    let handle: FileHandle | undefined;
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

/**
 * Whether the receiver has recorded every backlog delivery as done, on a connection of the bench's own to its SQLite
 * file (WAL: a reader neither waits for nor holds up the writer). A delivery is done only once its sink confirmed it,
 * so this is one moment for every sink type, where looking in each target would cost some a scan per look (a
 * PostgreSQL table, a RabbitMQ queue). The backlog's deliveries are the file's first rows, written before `serve`
 * starts, so `id <= last` leaves intake's out. `drained()` asks the (state, sink, id) index for one backlog delivery
 * not done, a few page reads however large the backlog: the bench's event loop also paces the intake it measures,
 * and a count of 100,000 index entries four times a second would delay its requests. Open it after the backlog is
 * written and before `serve` starts.
 */
export function backlogDeliveries(
  dataDir: string,
  sink: string,
): { drained(): boolean; done(): number; close(): void } {
  const db = new Database(join(dataDir, SQLITE_FILE));
  const { last } = db.prepare('SELECT max(id) AS last FROM deliveries').get() as { last: number };
  const open = db.prepare(
    "SELECT 1 FROM deliveries WHERE state IN ('pending', 'in_flight', 'dead') AND sink = ? AND id <= ? LIMIT 1",
  );
  const done = db.prepare("SELECT count(*) AS n FROM deliveries WHERE state = 'done' AND sink = ? AND id <= ?");
  return {
    drained: () => open.get(sink, last) === undefined,
    done: () => (done.get(sink, last) as { n: number }).n,
    close: () => db.close(),
  };
}
