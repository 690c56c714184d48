import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';

/**
 * What a user would write by hand for the same job: Express 5, `express.json()`, and one better-sqlite3 insert
 * per request in its own transaction, with the same durability callhook promises (WAL, synchronous=FULL), so the
 * comparison is between equally durable 200s.
 */

const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR must name a directory for the database');

const db = new Database(join(dataDir, 'express.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE IF NOT EXISTS calls (
  id INTEGER PRIMARY KEY,
  call_id TEXT UNIQUE,
  received_at TEXT NOT NULL,
  body TEXT NOT NULL)`);
// A duplicate call_id is ignored rather than an error, as a hand-written receiver that deduplicates would.
const insert = db.prepare('INSERT OR IGNORE INTO calls (call_id, received_at, body) VALUES (?, ?, ?)');

const app = express();
app.post('/webhooks/:hook', express.json(), (req, res) => {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const callId = typeof body.call_id === 'string' ? body.call_id : null;
  const { lastInsertRowid } = insert.run(callId, new Date().toISOString(), JSON.stringify(body));
  res.status(200).json({ status: 'accepted', id: String(lastInsertRowid) });
});

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stderr.write(`express-sqlite listening on http://127.0.0.1:${port}\n`);
});

process.on('SIGTERM', () => server.close(() => (db.close(), process.exit(0))));
