import { copyFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { compileParameters, RECOMMENDED_PARAMETERS } from '../../src/normalize/index.js';
import { SQLITE_FILE } from '../../src/store/open.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { storedCall } from './backlog.js';
import { bodyFactory, callFields } from './bodies.js';
import type { LoadResult } from './load.js';
import { startPacedLoad } from './paced.js';
import { removeDir, startCallhook, tempDir } from './processes.js';
import { type Settings, warnings } from './scenarios.js';

/**
 * docs/reference.md#retention: what a retention pass costs intake. A store holds `count` calls received two days ago,
 * each delivered (one delivery done, one attempt) with its receipt, as months of history would; `serve` with
 * `retention.calls: 1d` deletes them all in its first pass, while intake runs at 500 req/s. The same store and the
 * same load without the retention is the reference, measured in the same run for the same length of time.
 */

export interface RetentionRun {
  /** Intake while the pass ran: from its start to the end of its truncating checkpoint. */
  during: LoadResult;
  /** Intake on the same store without a pass, for as long. */
  without: LoadResult;
  /** The pass as the bench saw it: from the first call gone to the WAL emptied. */
  passSeconds: number;
  /** Old calls still there when the pass was over: 0 when it deleted them all. */
  left: number;
}

export interface RetentionResult {
  count: number;
  seedSeconds: number;
  runs: RetentionRun[];
}

const RATE = 500;
const CONNECTIONS = 50;
const DAY_MS = 86_400_000;
const SINKS = [{ name: 'jsonl', type: 'jsonl' }];
/**
 * The first pass comes `every` after start-up (reconcile/schedule.ts: the first run at min(every, 5 s)); intake's
 * first second is not counted (connection set-up, as in every row), so the pass starts as measuring does.
 */
const RETENTION = { calls: '1d', every: '1s' };
/** A pass that takes longer than this is reported as not ended. */
const PASS_BOUND_MS = 300_000;

export async function measureRetention(s: Settings): Promise<RetentionResult> {
  const seedDir = tempDir();
  try {
    const seeded = performance.now();
    await seedOldCalls(seedDir, s.backlog);
    const seedSeconds = (performance.now() - seeded) / 1000;
    const runs: RetentionRun[] = [];
    for (let run = 0; run < s.runs; run++) runs.push(await measureRun(seedDir, s.backlog));
    return { count: s.backlog, seedSeconds, runs };
  } finally {
    removeDir(seedDir);
  }
}

/** The pass, then the reference for as long as the pass took, each on a copy of the seeded store. */
async function measureRun(seedDir: string, count: number): Promise<RetentionRun> {
  const passDir = copyOf(seedDir);
  let during: LoadResult;
  let passSeconds: number;
  let left: number;
  try {
    const watch = watchPass(passDir, count);
    // The config file written here rather than by processes.ts, which writes sinks and hooks only.
    const config = join(passDir, 'bench-retention.json');
    writeFileSync(config, JSON.stringify({ sinks: SINKS, retention: RETENTION }));
    const server = await startCallhook({ dataDir: passDir, env: { CALLHOOK_CONFIG: config } });
    try {
      const load = startPacedLoad({
        url: server.url,
        body: bodyFactory('json'),
        seconds: PASS_BOUND_MS / 1000,
        warmupSeconds: 1,
        rate: RATE,
        connections: CONNECTIONS,
      });
      const pass = await watch.untilDone();
      load.stop();
      during = await load.result;
      passSeconds = pass.seconds;
      left = watch.left();
      if (!pass.ended) warnings.push(`retention: the pass did not end within ${PASS_BOUND_MS / 1000} s`);
    } finally {
      watch.close();
      await server.stop();
    }
  } finally {
    removeDir(passDir);
  }
  const quietDir = copyOf(seedDir);
  let without: LoadResult;
  try {
    const server = await startCallhook({ dataDir: quietDir, sinks: SINKS });
    try {
      without = await startPacedLoad({
        url: server.url,
        body: bodyFactory('json'),
        seconds: Math.max(1, during.seconds),
        warmupSeconds: 1,
        rate: RATE,
        connections: CONNECTIONS,
      }).result;
    } finally {
      await server.stop();
    }
  } finally {
    removeDir(quietDir);
  }
  return { during, without, passSeconds, left };
}

function copyOf(seedDir: string): string {
  const dir = tempDir();
  copyFileSync(join(seedDir, SQLITE_FILE), join(dir, SQLITE_FILE));
  return dir;
}

/**
 * Watches the pass from a read-only connection of the bench's own, by index lookups only (the bench's loop also paces
 * the load it measures): it has started once the first seeded call is gone, its deletes are over once the last seeded
 * receipt is (purge deletes calls, then receipts), and it has ended once its truncating checkpoint emptied the WAL,
 * which the deletes had grown.
 */
function watchPass(dataDir: string, count: number) {
  let db: Database.Database | undefined;
  const statements = () => {
    db ??= new Database(join(dataDir, SQLITE_FILE), { readonly: true });
    return {
      first: db.prepare('SELECT 1 FROM calls WHERE rowid = 1'),
      receipts: db.prepare('SELECT 1 FROM receipts WHERE rowid <= ? LIMIT 1'),
      left: db.prepare('SELECT count(*) AS n FROM calls WHERE rowid <= ?'),
    };
  };
  let stmts: ReturnType<typeof statements> | undefined;
  const walBytes = () => {
    try {
      return statSync(join(dataDir, `${SQLITE_FILE}-wal`)).size;
    } catch {
      return 0;
    }
  };
  return {
    async untilDone(): Promise<{ seconds: number; ended: boolean }> {
      stmts ??= statements();
      const bound = performance.now() + PASS_BOUND_MS;
      while (stmts.first.get() !== undefined && performance.now() < bound) await sleep(20);
      const started = performance.now();
      while (stmts.receipts.get(count) !== undefined && performance.now() < bound) await sleep(20);
      // Then the checkpoint, a second at most: the WAL falls from what the deletes grew to a few of intake's commits.
      const deleted = performance.now();
      let peak = walBytes();
      while (performance.now() - deleted < 1_000) {
        const bytes = walBytes();
        if (bytes < peak / 4 && bytes < 1_048_576) break;
        peak = Math.max(peak, bytes);
        await sleep(10);
      }
      return { seconds: (performance.now() - started) / 1000, ended: performance.now() < bound };
    },
    left: () => ((stmts ??= statements()).left.get(count) as { n: number }).n,
    close: () => db?.close(),
  };
}

/**
 * `count` calls of the end-of-call hook received two days ago, as `serve` would have stored them, each with a done
 * delivery to `jsonl` and its one attempt: the rows a purge deletes for a call, cascades included.
 */
async function seedOldCalls(dataDir: string, count: number): Promise<void> {
  const path = join(dataDir, SQLITE_FILE);
  const store = openSqliteStore({ path });
  const parameters = compileParameters(RECOMMENDED_PARAMETERS, { region: 'IN' });
  const at = new Date(Date.now() - 2 * DAY_MS);
  try {
    for (let start = 0; start < count; start += 1_000) {
      const commits: Promise<unknown>[] = [];
      for (let n = start; n < Math.min(count, start + 1_000); n++) {
        const fields = callFields(`retention-${String(n).padStart(7, '0')}`);
        commits.push(store.commitCall(storedCall(fields, parameters, ['jsonl'], at)));
      }
      await Promise.all(commits);
    }
  } finally {
    await store.close();
  }
  const db = new Database(path);
  try {
    db.exec(`UPDATE deliveries SET state = 'done';
      INSERT INTO attempts (delivery_id, attempt, started_at, duration_ms, outcome, http_status)
        SELECT id, 1, '${at.toISOString()}', 3.5, 'ok', 200 FROM deliveries`);
    // The copies start without a WAL, as a store at rest does.
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  if (statSync(path).size === 0) warnings.push('retention: the seeded store is empty');
}
