import pg from 'pg';
import type { CommitInput, CommitResult } from '../calls.js';
import { pgText, withClient } from './client.js';

/**
 * Group commit for PostgreSQL, as sqlite/batch.ts is for SQLite. A call committed alone is a transaction of three
 * to five round trips holding a pooled connection, and a WAL flush: when a campaign ends and its calls arrive at
 * once, they queue for the pool past the deadline (issue 24: three replicas sharing one PostgreSQL answered 157 to
 * 3,586 of 5,000 simultaneous calls in time, docs/performance.md). So the calls that arrive within one turn of the
 * event loop are committed by one statement: it inserts the calls, then the outbox rows and receipt of each one
 * that went in, in one round trip and one implicit transaction. A statement is atomic, and its promise settles
 * only at ReadyForQuery, after the COMMIT it implies: no call resolves before it is durable.
 *
 * A call whose key a stored call already has, or that repeats a key within the batch, is answered by a second
 * statement after the first, for all of them together (docs/reference.md#deduplication): the same content, or
 * `on_conflict: duplicate`, is a duplicate, counted on the stored call with its receipt; other content is a conflict,
 * and nothing is written. So the first of a key is the record and the next its duplicates, as if they had come one
 * after the other; one at a time, a storm of copies held a pooled connection and a transaction of three to five
 * round trips each (1,200 of the 1,500 requests of the bench's duplicate storm, docs/performance.md). What neither
 * statement settles goes the way of a call alone (postgres/store.ts `commit`): one that ingests a refused request, one
 * whose stored call the second statement did not see (committed after it began, or deleted meanwhile), one stored
 * before content hashes were kept (migration 4).
 */

/** Bounds one statement's parameters and the rows it locks, whatever the storm: a busy turn makes several. */
export const MAX_BATCH = 250;

type Commit = (input: CommitInput) => Promise<CommitResult>;

interface Pending {
  input: CommitInput;
  resolve: (result: CommitResult) => void;
  reject: (err: unknown) => void;
}

/** `alone` commits one call in a transaction of its own; the batcher returned takes its place. */
export function createCommitBatcher(pool: pg.Pool, alone: Commit): Commit {
  async function commitBatch(batch: Pending[]): Promise<void> {
    const together = firstOfEachKey(batch);
    let inserted: ReadonlySet<string> = new Set();
    let failed: ReadonlySet<Pending> = new Set();
    try {
      if (together.length > 0)
        inserted = await insertTogether(
          pool,
          together.map((p) => p.input),
        );
    } catch (err) {
      if (failedUnknown(err, together)) failed = new Set(together);
    }
    const left: Pending[] = [];
    for (const p of batch) {
      if (inserted.has(p.input.record.id)) p.resolve({ outcome: p.input.status, id: p.input.record.id });
      else if (!failed.has(p)) left.push(p);
    }
    oneByOne(await repeatsTogether(left));
  }

  /** Settles the repeats of stored calls it can in one statement; returns the calls left to commit alone. */
  async function repeatsTogether(left: Pending[]): Promise<Pending[]> {
    const repeats = left.filter((p) => p.input.ingests === undefined && p.input.record.dedup_key !== null);
    if (repeats.length === 0) return left;
    let settled: Map<number, CommitResult>;
    try {
      settled = await countRepeats(
        pool,
        repeats.map((p) => p.input),
      );
    } catch (err) {
      return failedUnknown(err, repeats) ? left.filter((p) => !repeats.includes(p)) : left;
    }
    const done = new Set<Pending>();
    repeats.forEach((p, i) => {
      const result = settled.get(i + 1);
      if (result === undefined) return;
      p.resolve(result);
      done.add(p);
    });
    return left.filter((p) => !done.has(p));
  }

  /**
   * What a statement's failure means for its calls. The connection broke or the query timed out: whether it committed
   * is unknown, and calls tried again might find their own rows and call themselves duplicates, so each fails, as a
   * call alone would (true). PostgreSQL answered with an error: nothing of the statement is kept, and each call is
   * tried alone, so only one that fails on its own is refused: a constraint, a value the column refuses, a deadlock
   * (false).
   */
  function failedUnknown(err: unknown, calls: readonly Pending[]): boolean {
    if (err instanceof pg.DatabaseError) return false;
    for (const p of calls) p.reject(err);
    return true;
  }

  /**
   * Each call in a transaction of its own, at once, but the calls of one key one after another in the order they
   * came: the first to insert is the record, the next finds it.
   */
  function oneByOne(calls: readonly Pending[]): void {
    const chains = new Map<string, Promise<void>>();
    for (const p of calls) {
      const key = keyOf(p.input) ?? p.input.record.id;
      const run = () => alone(p.input).then(p.resolve, p.reject);
      chains.set(key, (chains.get(key) ?? Promise.resolve()).then(run));
    }
  }

  // The calls of one turn go when it ends (setImmediate runs after the turn's I/O callbacks, as in per-turn.ts), or
  // as soon as they fill a statement: one turn of a storm reads a thousand requests and more, and PostgreSQL, a
  // process of its own, commits the first of them meanwhile instead of after the last is read.
  let gathering: Pending[] = [];
  const send = () => {
    const batch = gathering;
    gathering = [];
    if (batch.length > 0) void commitBatch(batch);
  };
  const enqueue = (p: Pending) => {
    gathering.push(p);
    if (gathering.length === 1) setImmediate(send);
    else if (gathering.length === MAX_BATCH) send();
  };
  return (input) => new Promise<CommitResult>((resolve, reject) => enqueue({ input, resolve, reject }));
}

/**
 * A call without a dedup key (docs/reference.md#deduplication: nothing in it to tell it from another) never meets
 * another.
 */
const keyOf = ({ record }: CommitInput): string | undefined =>
  record.dedup_key === null ? undefined : JSON.stringify([record.hook, record.dedup_key]);

/** The calls the statement takes: none that ingests, and only the first of each key. */
function firstOfEachKey(batch: readonly Pending[]): Pending[] {
  const seen = new Set<string>();
  return batch.filter(({ input }) => {
    if (input.ingests !== undefined) return false;
    const key = keyOf(input);
    if (key === undefined) return true;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * One row per call, zipped from one parameter per column in the order given. The records and raw requests, the
 * bulk of the bytes, come as one JSON array each: they are JSON already, so the array is their texts joined, where
 * a json[] parameter would cost an escape of every quote and backslash in them (40 µs a call against 14 for a 1 KB
 * body, measured alone); json_array_elements gives each element's text as written (key order, spacing and \u0000
 * kept, as a `json` column keeps them).
 *
 * Calls are inserted in key order, so two statements that share keys (a sender's repeat meeting its first at
 * another replica) wait for each other in the same order and never deadlock. The outbox rows and receipts are only
 * those of the calls that went in.
 */
const INSERT_TOGETHER = `
  WITH batch AS (
    SELECT * FROM ROWS FROM (
      unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::text[]), unnest($5::text[]), unnest($6::text[]),
      unnest($7::timestamptz[]), json_array_elements($8::json), json_array_elements($9::json),
      unnest($10::text[]), unnest($11::timestamptz[]), unnest($12::text[]), unnest($13::text[]), unnest($14::integer[]), unnest($15::text[])
    ) WITH ORDINALITY AS b (id, hook, dedup_key, content_hash, status, source, received_at, record, raw,
      receipt_hook, receipt_received_at, method, content_type, size, error, n)
  ),
  inserted AS (
    INSERT INTO calls (id, hook, dedup_key, content_hash, status, source, received_at, record, raw)
    SELECT id, hook, dedup_key, content_hash, status, source, received_at, record, raw FROM batch ORDER BY hook, dedup_key
    ON CONFLICT (hook, dedup_key) DO NOTHING
    RETURNING id
  ),
  outbox AS (
    INSERT INTO deliveries (call_id, sink, state, next_attempt_at, updated_at, created_at)
    SELECT o.call_id, o.sink, 'pending', $18, $18, $18
    FROM unnest($16::text[], $17::text[]) WITH ORDINALITY AS o (call_id, sink, n) JOIN inserted ON inserted.id = o.call_id
    -- Ids in the order the sinks were given, as a call alone makes them (the admin lists deliveries by id).
    ORDER BY o.n
  ),
  receipt AS (
    -- The call's raw request holds the body and query: its receipt need not hold them again.
    INSERT INTO receipts (hook, received_at, method, content_type, size, status, outcome, call_id, error, source)
    SELECT receipt_hook, receipt_received_at, method, content_type, size, 200, status, id, error, source
    FROM batch JOIN inserted USING (id) ORDER BY n
  )
  SELECT id FROM inserted`;

/**
 * The repeats of stored calls, in the order they came (`n`), each matched with the stored call of its key. Those with
 * the same content, or `on_conflict: duplicate`, are counted on it, as many as they are, with a receipt each that
 * keeps its body and query; those with other content under `keep` are conflicts, nothing written. A stored call is
 * taken only with its content hash (migration 4), and counted only if the UPDATE still finds it: one whose row it
 * did not match is left to be committed alone.
 */
const COUNT_REPEATS = `
  WITH b AS (
    SELECT * FROM ROWS FROM (
      unnest($1::text[]), unnest($2::text[]), unnest($3::text[]), unnest($4::boolean[]), unnest($5::text[]),
      unnest($6::timestamptz[]), unnest($7::text[]), unnest($8::text[]), unnest($9::integer[]), unnest($10::text[]),
      unnest($11::bytea[]), unnest($12::text[]), unnest($13::text[])
    ) WITH ORDINALITY AS b (hook, dedup_key, content_hash, counted_anyway, receipt_hook, received_at, method, content_type,
      size, error, raw_body, query, source, n)
  ),
  matched AS (
    SELECT b.n, c.id, c.content_hash = b.content_hash OR b.counted_anyway AS duplicate
    FROM b JOIN calls c ON c.hook = b.hook AND c.dedup_key = b.dedup_key WHERE c.content_hash IS NOT NULL
  ),
  -- Locked in id order before they are counted: the UPDATE alone takes its rows in the order its grouping happens to
  -- give, which differs between two sets of calls, and two replicas counting repeats of the same calls then deadlocked
  -- (PostgreSQL breaks a deadlock only after deadlock_timeout, 1 s, and every call of the statement then went alone).
  locked AS (
    SELECT c.id FROM calls c WHERE c.id IN (SELECT id FROM matched WHERE duplicate) ORDER BY c.id FOR NO KEY UPDATE
  ),
  counted AS (
    UPDATE calls c SET duplicates = c.duplicates + m.k
    FROM (SELECT id, count(*) AS k FROM matched WHERE duplicate GROUP BY id) m
    WHERE c.id = m.id AND c.id IN (SELECT id FROM locked)
    RETURNING c.id
  ),
  receipt AS (
    INSERT INTO receipts (hook, received_at, method, content_type, size, status, outcome, call_id, error, raw_body, query, source)
    SELECT b.receipt_hook, b.received_at, b.method, b.content_type, b.size, 200, 'duplicate', m.id, b.error, b.raw_body,
      b.query, b.source
    FROM b JOIN matched m USING (n) JOIN counted USING (id) WHERE m.duplicate ORDER BY b.n
  )
  SELECT m.n, m.id, m.duplicate FROM matched m WHERE NOT m.duplicate OR m.id IN (SELECT id FROM counted)`;

/** Counts the repeats it can on their stored calls; returns each settled one's result by its 1-based place. */
async function countRepeats(pool: pg.Pool, calls: readonly CommitInput[]): Promise<Map<number, CommitResult>> {
  const column = <T>(pick: (call: CommitInput) => T) => calls.map(pick);
  const values = [
    column((c) => c.record.hook),
    column((c) => c.record.dedup_key),
    column((c) => c.contentHash),
    column((c) => c.onConflict === 'duplicate'),
    column((c) => c.receipt.hook),
    column((c) => c.receipt.receivedAt),
    column((c) => c.receipt.method),
    column((c) => c.receipt.contentType),
    column((c) => c.receipt.size),
    column((c) => pgText(c.receipt.error)),
    column(({ receipt: { rawBody } }) =>
      rawBody ? Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength) : null,
    ),
    column((c) => pgText(c.receipt.query)),
    // A receipt says where its request came from as the call does: a repeat's, the repeat's own source.
    column((c) => c.record.source),
  ];
  const { rows } = await withClient(pool, (client) =>
    client.query<{ n: number; id: string; duplicate: boolean }>({
      name: 'callhook-count-repeats',
      text: COUNT_REPEATS,
      values,
    }),
  );
  return new Map(
    rows.map(({ n, id, duplicate }) => [Number(n), { outcome: duplicate ? 'duplicate' : 'conflict', id }] as const),
  );
}

/** Commits the calls that insert, with their outbox rows and receipts; returns the ids of those that did. */
async function insertTogether(pool: pg.Pool, calls: readonly CommitInput[]): Promise<Set<string>> {
  const column = <T>(pick: (call: CommitInput) => T) => calls.map(pick);
  const jsonArray = (pick: (call: CommitInput) => unknown) =>
    `[${calls.map((c) => JSON.stringify(pick(c))).join(',')}]`;
  const outbox = calls.flatMap(({ record, sinks }) => sinks.map((sink) => [record.id, sink] as const));
  const values = [
    column((c) => c.record.id),
    column((c) => c.record.hook),
    column((c) => c.record.dedup_key),
    column((c) => c.contentHash),
    column((c) => c.status),
    column((c) => c.record.source),
    column((c) => c.record.received_at),
    jsonArray((c) => c.record),
    jsonArray((c) => c.raw),
    column((c) => c.receipt.hook),
    column((c) => c.receipt.receivedAt),
    column((c) => c.receipt.method),
    column((c) => c.receipt.contentType),
    column((c) => c.receipt.size),
    column((c) => pgText(c.receipt.error)),
    outbox.map(([id]) => id),
    outbox.map(([, sink]) => sink),
    Date.now(),
  ];
  // Named, so each pooled connection plans it once.
  const { rows } = await withClient(pool, (client) =>
    client.query<{ id: string }>({ name: 'callhook-insert-together', text: INSERT_TOGETHER, values }),
  );
  return new Set(rows.map((row) => row.id));
}
