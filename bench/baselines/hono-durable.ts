import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';

/**
 * The earlier durable baseline, kept beside the reference minimal durable receiver (docs/performance.md) to show
 * what the yardstick was: the same HTTP stack, `c.req.json()`, the body as JSON again, one row and one outbox row,
 * the rows of one event-loop turn in one better-sqlite3 transaction (WAL, synchronous=FULL), each request answered
 * after that COMMIT; but keyed on random UUIDs in a WITHOUT ROWID table whose rows hold the whole body, so every
 * insert lands at a random place in a B-tree of large rows: weaker than the reference, whose keys arrive in order.
 */

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR must name a directory for the database');

const db = new Database(join(dataDir, 'durable.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, received_at TEXT NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY, call_id TEXT NOT NULL, sink TEXT NOT NULL)`);
const insertCall = db.prepare('INSERT INTO calls (id, received_at, body) VALUES (?, ?, ?)');
const insertOutbox = db.prepare('INSERT INTO outbox (call_id, sink) VALUES (?, ?)');

interface Pending {
  id: string;
  body: string;
  done: () => void;
}

let turn: Pending[] = [];
const commit = db.transaction((batch: Pending[]) => {
  const now = new Date().toISOString();
  for (const { id, body } of batch) {
    insertCall.run(id, now, body);
    insertOutbox.run(id, 'jsonl');
  }
});

function flush(): void {
  const batch = turn;
  turn = [];
  commit.immediate(batch);
  for (const pending of batch) pending.done();
}

const store = (id: string, body: string) =>
  new Promise<void>((done) => {
    if (turn.length === 0) setImmediate(flush);
    turn.push({ id, body, done });
  });

const app = new Hono().post('/webhooks/:hook', async (c) => {
  const body = await c.req.json<unknown>();
  const id = randomUUID();
  await store(id, JSON.stringify(body));
  return c.json({ status: 'accepted', id }, 200);
});

const server = serve(
  { fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: process.env.HOST ?? '127.0.0.1' },
  (info) => {
    process.stderr.write(`hono-durable listening on http://${info.address}:${info.port}\n`);
  },
);

process.on('SIGTERM', () => server.close(() => (db.close(), process.exit(0))));
