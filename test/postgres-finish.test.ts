import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AttemptResult, ClaimedDelivery } from '../src/store/outbox.js';
import { createFinishBatcher, MAX_FINISHES } from '../src/store/postgres/finish.js';
import { openPostgresStore } from '../src/store/postgres/store.js';
import { isFailing } from '../src/store/sink-state.js';
import type { Store } from '../src/store/store.js';
import { serviceUrl } from './helpers/services.js';
import { attemptOk, commitInput, unique } from './helpers/store-inputs.js';

/**
 * The delivery worker's finished attempts on PostgreSQL (src/store/postgres/finish.ts): those of one turn of the event
 * loop are recorded by one statement, and come out as they would one after the other. Every finish below is handed
 * over in one turn (`Promise.all` over calls made synchronously), so each test's finishes form one batch.
 */

const url = serviceUrl('postgres');

describe.skipIf(!url)('postgres grouped finishes', () => {
  let admin: pg.Client;
  let schema: string;
  let store: Store;
  let pool: pg.Pool;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url, types: int8AsNumber });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
  });
  beforeEach(async () => {
    schema = `callhook_finish_${randomBytes(6).toString('hex')}`;
    store = await openPostgresStore({ url: url!, schema, poolSize: 4 });
    pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 2, types: int8AsNumber });
  });
  afterEach(async () => {
    await store.close();
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  /** A batcher on a pool of its own whose statements are counted. */
  const countedBatcher = () => {
    const query = vi.spyOn(pool, 'query');
    return { finish: createFinishBatcher(pool), statements: () => query.mock.calls.length };
  };

  /** `n` deliveries of `sink`, committed and claimed: in flight, as the worker holds them. */
  const claimed = async (sink: string, n: number): Promise<ClaimedDelivery[]> => {
    const hook = unique('hook');
    await Promise.all(Array.from({ length: n }, (_, i) => store.commitCall(commitInput(hook, `call_id:${i}`, [sink]))));
    const got = await store.claimDeliveries(sink, n, 60_000);
    expect(got).toHaveLength(n);
    return got;
  };

  const rows = async <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) =>
    (await admin.query<T>(sql.replaceAll('%s', `"${schema}"`), values)).rows;
  const stateOf = async (sink: string) => (await store.sinkStates()).find((s) => s.sink === sink);

  const retry = (error: string): AttemptResult => ({ ...attemptOk, outcome: 'retry', httpStatus: 503, error });
  const dead: AttemptResult = { ...attemptOk, outcome: 'dead', httpStatus: 400, error: 'HTTP 400: bad field' };

  it('records many attempts of one turn in one statement: each delivery moved on, each attempt kept', async () => {
    const sink = unique('sink');
    const deliveries = await claimed(sink, 300);
    const { finish, statements } = countedBatcher();
    const retryAt = Date.now() + 60_000;
    const results = deliveries.map((_, i): [AttemptResult, number?] =>
      i % 3 === 0 ? [attemptOk] : i % 3 === 1 ? [retry(`HTTP 503: ${i}`), retryAt] : [dead],
    );
    const recorded = await Promise.all(deliveries.map((d, i) => finish(d.id, d.attempt, ...results[i]!)));
    expect(recorded).toEqual(deliveries.map(() => true));
    expect(statements()).toBe(1);

    const states = await rows<{ id: number; state: string; next_attempt_at: number; last_error: string | null }>(
      `SELECT id, state, next_attempt_at, last_error FROM %s.deliveries WHERE sink = $1 ORDER BY id`,
      [sink],
    );
    expect(states).toEqual(
      deliveries.map((d, i) => ({
        id: d.id,
        state: ['done', 'pending', 'dead'][i % 3],
        next_attempt_at: i % 3 === 1 ? retryAt : expect.any(Number),
        last_error: results[i]![0].error ?? null,
      })),
    );
    const attempts = await rows<{ delivery_id: number; attempt: number; outcome: string; http_status: number }>(
      `SELECT delivery_id, attempt, outcome, http_status FROM %s.attempts ORDER BY id`,
    );
    // One row each, in the order they finished.
    expect(attempts).toEqual(
      deliveries.map((d, i) => ({
        delivery_id: d.id,
        attempt: 1,
        outcome: results[i]![0].outcome,
        http_status: results[i]![0].httpStatus,
      })),
    );
  });

  it("drops an attempt that was not its worker's to finish, and records the others of its batch", async () => {
    const sink = unique('sink');
    const [mine, takenOver] = await claimed(sink, 2);
    const { finish } = countedBatcher();
    // The second's lease was taken over: it is in flight as attempt 2 now, and this worker reports attempt 1.
    await admin.query(`UPDATE "${schema}".deliveries SET attempts = 2 WHERE id = $1`, [takenOver!.id]);
    const recorded = await Promise.all([finish(mine!.id, 1, attemptOk), finish(takenOver!.id, 1, dead)]);
    expect(recorded).toEqual([true, false]);
    expect(await rows(`SELECT delivery_id FROM %s.attempts`)).toEqual([{ delivery_id: mine!.id }]);
    expect(await rows(`SELECT state, attempts FROM %s.deliveries WHERE id = $1`, [takenOver!.id])).toEqual([
      { state: 'in_flight', attempts: 2 },
    ]);
    // Its failure is not the sink's either: only the success it was given.
    expect(await stateOf(sink)).toMatchObject({ lastError: null, lastSuccessAt: expect.any(Number) });
  });

  it("writes each sink's state once from its attempts of the batch: the latest error, the longest wait, a success after them", async () => {
    const [recovering, failing, delivering] = [unique('sink'), unique('sink'), unique('sink')];
    const [r1, r2, r3] = await claimed(recovering, 3);
    // The fourth is claimed now: once the 429 is recorded, the sink is held and nothing more is claimed.
    const [f1, f2, f3, f4] = await claimed(failing, 4);
    const [d1, d2] = await claimed(delivering, 2);
    const { finish, statements } = countedBatcher();
    const now = Date.now();
    const [longer, shorter] = [now + 600_000, now + 60_000];
    await Promise.all([
      finish(r1!.id, 1, retry('HTTP 503: first')),
      finish(r2!.id, 1, retry('HTTP 503: second')),
      finish(r3!.id, 1, attemptOk),
      finish(f1!.id, 1, attemptOk),
      finish(f2!.id, 1, { ...retry('HTTP 429: slow down'), httpStatus: 429 }, longer, longer),
      finish(f3!.id, 1, { ...retry('HTTP 429: again'), httpStatus: 429 }, shorter, shorter),
      finish(d1!.id, 1, attemptOk),
      finish(d2!.id, 1, attemptOk),
    ]);
    expect(statements()).toBe(1);

    // Its last word a success: the failure is kept as what happened, and the sink is not failing.
    const recovered = (await stateOf(recovering))!;
    expect(recovered).toMatchObject({ lastError: 'HTTP 503: second', pausedUntil: null });
    expect(recovered.lastSuccessAt).toBe(recovered.lastErrorAt);
    expect(isFailing(recovered)).toBe(false);
    // Its last word a failure: the latest error, and the longest of the waits a 429 asked for.
    const failed = (await stateOf(failing))!;
    expect(failed).toMatchObject({ lastError: 'HTTP 429: again', pausedUntil: longer, lastSuccessAt: null });
    expect(isFailing(failed)).toBe(true);
    const delivered = (await stateOf(delivering))!;
    expect(delivered).toMatchObject({ lastError: null, lastErrorAt: null, pausedUntil: null });
    expect(delivered.lastSuccessAt).toBeGreaterThanOrEqual(now);

    // A later batch never shortens a wait already running.
    await finish(f4!.id, 1, { ...retry('HTTP 429: once more'), httpStatus: 429 }, shorter, shorter);
    expect(await stateOf(failing)).toMatchObject({ lastError: 'HTTP 429: once more', pausedUntil: longer });
  });

  it('fills a statement and starts the next when a turn finishes more than one holds', async () => {
    const sink = unique('sink');
    const deliveries = await claimed(sink, MAX_FINISHES + 20);
    const { finish, statements } = countedBatcher();
    const recorded = await Promise.all(deliveries.map((d) => finish(d.id, d.attempt, attemptOk)));
    expect(recorded.every(Boolean)).toBe(true);
    expect(statements()).toBe(2);
    expect(await rows(`SELECT count(*)::int AS n FROM %s.attempts`)).toEqual([{ n: MAX_FINISHES + 20 }]);
    expect(await rows(`SELECT count(*)::int AS n FROM %s.deliveries WHERE state = 'done'`)).toEqual([
      { n: MAX_FINISHES + 20 },
    ]);
  });

  it('records each attempt alone when PostgreSQL refuses the batch, so only the one at fault fails', async () => {
    const sink = unique('sink');
    const [good, bad, other] = await claimed(sink, 3);
    const { finish, statements } = countedBatcher();
    const settled = await Promise.allSettled([
      finish(good!.id, 1, attemptOk),
      // A start time PostgreSQL cannot read fails the statement that carries it.
      finish(bad!.id, 1, { ...attemptOk, startedAt: 'not a time' }),
      finish(other!.id, 1, dead),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : undefined))).toEqual([true, undefined, true]);
    // The batch, then each of its three alone.
    expect(statements()).toBe(4);
    expect(await rows(`SELECT delivery_id FROM %s.attempts ORDER BY delivery_id`)).toEqual([
      { delivery_id: good!.id },
      { delivery_id: other!.id },
    ]);
    expect(await rows(`SELECT state FROM %s.deliveries WHERE id = $1`, [bad!.id])).toEqual([{ state: 'in_flight' }]);
  });
});

/** Ids and epoch milliseconds are bigint, which pg hands back as strings unless told, as the store's pool is. */
const int8AsNumber = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20 && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};
