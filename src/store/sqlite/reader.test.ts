import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type SqliteReader, sqliteReader } from './reader.js';

/** Hundreds of milliseconds of SQLite: long enough that the event loop turns meanwhile only if it runs elsewhere. */
const SLOW =
  'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < @upTo) SELECT COUNT(*) AS count FROM n';

/** Counts the turns of the event loop until `work` settles: none for work done on this thread. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  const result = await work();
  done = true;
  return { result, turns };
}

describe('sqliteReader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-reader-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function open(name: string): Database.Database {
    const db = new Database(join(dir, name));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    return db;
  }

  /** A reader on `db` for `work`, then both closed. */
  async function withReader(db: Database.Database, work: (reader: SqliteReader) => Promise<void>): Promise<void> {
    const reader = sqliteReader(db);
    try {
      await work(reader);
    } finally {
      await reader.close();
      db.close();
    }
  }

  it('reads a database file on a thread of its own: the event loop keeps turning during a long query', async () => {
    await withReader(open('file.db'), async (reader) => {
      const { result, turns } = await turnsDuring(() => reader.all<{ count: number }>(SLOW, { upTo: 3_000_000 }));
      expect(result).toEqual([{ count: 3_000_000 }]);
      expect(turns).toBeGreaterThan(0);
    });
  });

  it('sees every write committed on the store connection before the query', async () => {
    const db = open('writes.db');
    await withReader(db, async (reader) => {
      for (let i = 0; i < 3; i++) {
        db.prepare('INSERT INTO t (v) VALUES (?)').run(`row ${i}`);
        expect(await reader.all('SELECT v FROM t ORDER BY id')).toEqual(
          Array.from({ length: i + 1 }, (_, j) => ({ v: `row ${j}` })),
        );
      }
      // The text-folding functions of the store's connection are there too.
      expect(await reader.all("SELECT callhook_fold('  ÉLODIE ') AS folded, callhook_lower(NULL) AS none")).toEqual([
        { folded: 'élodie', none: null },
      ]);
    });
  });

  it("refuses a bad query with SQLite's own error", async () => {
    await withReader(open('errors.db'), async (reader) => {
      await expect(reader.all('SELECT * FROM nope')).rejects.toThrow('no such table: nope');
      // The reader is still the one answering afterwards.
      const { turns } = await turnsDuring(() => reader.all(SLOW, { upTo: 3_000_000 }));
      expect(turns).toBeGreaterThan(0);
    });
  });

  it('reads an in-memory database in place, since no other connection can open it', async () => {
    await withReader(new Database(':memory:'), async (reader) => {
      const { result, turns } = await turnsDuring(() => reader.all<{ count: number }>(SLOW, { upTo: 1_000 }));
      expect(result).toEqual([{ count: 1_000 }]);
      expect(turns).toBe(0);
    });
  });
});
