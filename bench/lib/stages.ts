import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config.js';
import { requestFields, type WebhookRequest } from '../../src/intake/parse/request-fields.js';
import { compileHooks, prepareCall } from '../../src/intake/pipeline.js';
import type { RequestOutcome } from '../../src/intake/request.js';
import { createLogger, requestLogger, turnDestination } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { contentHash, dedupKey, normalize } from '../../src/normalize/index.js';
import { callRow } from '../../src/store/sqlite/rows.js';
import { sqliteStoreOn } from '../../src/store/sqlite/store.js';
import { sqliteWrites } from '../../src/store/sqlite/writes.js';
import type { Store } from '../../src/store/store.js';
import { bodyFactory } from './bodies.js';
import { API_KEY, removeDir, tempDir } from './processes.js';

/**
 * Where a durable JSON call's CPU goes, stage by stage (issue 24), in µs per call: each stage run alone in this
 * process, many times over, on the bench's own 1 KB body. No HTTP, no threads between stages, no load generator
 * sharing the cores: the figures add up to the work a call costs, not to what a full-speed run measures, and say
 * which stage to make cheaper. The commit is measured with `synchronous=OFF` (its CPU; the fsync is a wait the
 * writer's thread spends for a whole batch) and in batches of 50, as calls arrive under load.
 */

export interface Stage {
  name: string;
  /** µs per call, median of the rounds. */
  us: number;
  note: string;
}

const ROUNDS = 5;
const BATCH = 50;

export async function measureStages(calls: number): Promise<Stage[]> {
  const dataDir = tempDir();
  try {
    return await stages(calls, dataDir);
  } finally {
    removeDir(dataDir);
  }
}

async function stages(calls: number, dataDir: string): Promise<Stage[]> {
  const config = loadConfig({ CALLHOOK_DATA_DIR: dataDir, CALLHOOK_API_KEYS: API_KEY });
  const hooks = compileHooks(config, [{ name: 'jsonl', when: undefined, testTraffic: true }]);
  const hook = hooks.get('end-of-call')!;
  const bodies = bodyFactory('json');
  const encoder = new TextEncoder();
  const requestAt = (): WebhookRequest => ({
    hook: 'end-of-call',
    method: 'POST',
    contentType: 'application/json',
    search: '',
    body: encoder.encode(bodies.next()),
    receivedAt: new Date().toISOString(),
    source: 'webhook',
  });
  // Every stage that stores runs on calls never stored before: one of each per call of every round.
  const total = calls * (ROUNDS + 1);
  const requests = Array.from({ length: total }, requestAt);
  const read = await Promise.all(requests.map((r) => requestFields(r, false)));
  const prepared = requests.map((r, i) =>
    prepareCall({
      hook,
      ...read[i]!,
      source: 'webhook',
      receipt: {
        hook: r.hook,
        receivedAt: r.receivedAt,
        method: r.method,
        contentType: r.contentType,
        size: r.body.byteLength,
        rawBody: r.body,
        query: '',
      },
    }),
  );
  const out: Stage[] = [];
  const stage = async (name: string, note: string, run: (i: number) => unknown) =>
    out.push({ name, note, us: await timed(calls, run) });

  const log = requestLogger(createLogger({ level: 'info', destination: turnDestination('/dev/null') }));
  // Each call waits for a turn, as a request does for its commit, so the turn's lines are written within the count.
  await stage(
    'the request log line',
    'pino, one line a request, written once a turn (50 lines) to /dev/null as the bench runs serve',
    (i) => {
      log.info(
        {
          reqId: `r${i}`,
          method: 'POST',
          path: '/webhooks/end-of-call',
          status: 200,
          ms: 1.2,
          remote: '127.0.0.1',
          hook: 'end-of-call',
          outcome: 'accepted',
          callId: 'x',
        },
        'request',
      );
      return nextTurn();
    },
  );
  const metrics = createMetrics({} as Store, []);
  await stage('the request metrics', 'prom-client: the requests counter and the reply-time histogram', () =>
    metrics.observeRequest('end-of-call', 'accepted', 0.002),
  );

  await stage('parse the body', 'query and JSON body to fields, and the raw request kept', (i) =>
    requestFields(requests[i]!, false),
  );
  await stage('normalise', 'fields against the declared parameters (phone, date, email, URL, enum, numbers)', (i) =>
    normalize(read[i]!.fields, hook.parameters),
  );
  const normalized = read.map((r) => normalize(r.fields, hook.parameters));
  await stage('dedup key and content hash', 'canonical JSON and SHA-256 of the content; the key from call_id', (i) => {
    const { data, extra, problems } = normalized[i]!;
    const hash = contentHash(data, extra, problems);
    return dedupKey(hook.config.dedup, data, extra, { empty: false, hash });
  });
  await stage('the whole record', 'normalise, key, record, sinks chosen: prepareCall', (i) =>
    prepareCall({ hook, ...read[i]!, source: 'webhook', receipt: prepared[i]!.commit.receipt }),
  );
  await stage('rows as the writer takes them', 'record and raw request to JSON (callRow)', (i) =>
    callRow(prepared[i]!.commit),
  );

  // The commit: the writer's own statements on a file of its own, CPU only.
  const db = new Database(join(dataDir, 'stages.db'));
  sqliteStoreOn(db);
  db.pragma('synchronous = OFF');
  const writes = sqliteWrites(db);
  const rows = prepared.map((p) => callRow(p.commit));
  await stage(
    'commit: call, outbox row, receipt',
    `the INSERTs and their indexes, ${BATCH} calls a transaction, no fsync`,
    batched(db, (i) => writes.commitCall(rows[i]!)),
  );
  await stage(
    'deliver: claim and finish',
    `the worker's claim and its finished attempts, ${BATCH} at a time, no fsync`,
    batched(db, (i) => {
      if (i % BATCH !== 0) return;
      // A claim's attempts settle together (the jsonl sink's one write) and are recorded as one write.
      const result = { outcome: 'ok' as const, startedAt: new Date().toISOString(), durationMs: 0.1 };
      writes.finishAttempts(
        writes.claimDeliveries('jsonl', BATCH, 30_000).map((row) => ({ id: row.id, attempt: row.attempts, result })),
      );
    }),
  );
  db.close();

  const thread = threadHop(requests);
  try {
    await stage(
      'the thread hop',
      `a request's bytes to the writer's thread and its reply back, ${BATCH} a message`,
      thread.hop,
    );
  } finally {
    // Its port would keep the bench's process alive after the report.
    await thread.close();
  }
  await stage('the reply', 'the reply object to JSON', (i) => JSON.stringify(commitReply(i)));
  return out;
}

function commitReply(i: number): RequestOutcome {
  return {
    reply: {
      status: 'accepted',
      id: `01JD${String(i).padStart(22, '0')}`,
      dedup_key: `call_id:bench-${i}`,
      problems: [],
    },
  };
}

/** Runs `work` over the batch's calls in one transaction, as the group commit does. */
function batched(db: Database.Database, work: (i: number) => unknown): (i: number) => unknown {
  let open = false;
  return (i) => {
    if (i % BATCH === 0) {
      if (open) db.exec('COMMIT');
      db.exec('BEGIN IMMEDIATE');
      open = true;
    }
    work(i);
    if (i % BATCH === BATCH - 1) {
      db.exec('COMMIT');
      open = false;
    }
  };
}

/** Rounds over every call, the median round's µs per call; the first round warms up and is not counted. */
async function timed(calls: number, run: (i: number) => unknown): Promise<number> {
  const rounds: number[] = [];
  let offset = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    const started = performance.now();
    // As calls arrive under load: a batch at a time, each awaited with the others of its batch.
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < calls; i++) {
      const value = run(i + offset);
      if (value instanceof Promise) pending.push(value);
      if (pending.length === BATCH) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    if (round > 0) rounds.push(((performance.now() - started) * 1000) / calls);
    offset += calls;
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)]!;
}

/**
 * What handing a call to the writer's thread costs, both ends counted: a worker that answers each request of a
 * message with a reply of the size callhook sends, the messages batched per turn as store/thread.ts batches them.
 */
function threadHop(requests: readonly WebhookRequest[]): {
  hop: (i: number) => Promise<unknown>;
  close: () => Promise<number>;
} {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', ({ calls }) => parentPort.postMessage({ results: calls.map(({ id, request }) => ({ id, value: { reply: {
       status: 'accepted', id: '01JD' + String(id).padStart(22, '0'), dedup_key: 'call_id:' + request.hook, problems: [] } } })) }));`,
    { eval: true },
  );
  worker.unref();
  const waiting = new Map<number, () => void>();
  worker.on('message', ({ results }: { results: { id: number }[] }) => {
    for (const { id } of results) waiting.get(id)?.();
  });
  let batch: { id: number; request: WebhookRequest }[] = [];
  let next = 0;
  const hop = (i: number) =>
    new Promise<void>((resolve) => {
      const id = next++;
      waiting.set(id, () => (waiting.delete(id), resolve()));
      batch.push({ id, request: requests[i % requests.length]! });
      if (batch.length === BATCH) {
        worker.postMessage({ calls: batch });
        batch = [];
      }
    });
  return { hop, close: () => worker.terminate() };
}
