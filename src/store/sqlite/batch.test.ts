import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createWriteBatcher } from './batch.js';

const open = () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  return db;
};

describe('group commit', () => {
  it('commits writes queued in one turn of the event loop in one transaction', async () => {
    const db = open();
    const sizes: number[] = [];
    const write = createWriteBatcher(db, (n) => sizes.push(n));
    const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => write(() => insert.run(`k${i}`).changes)));
    expect(results).toEqual(Array(50).fill(1));
    expect(sizes).toEqual([50]);
    await write(() => insert.run('later'));
    expect(sizes).toEqual([50, 1]);
    expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(51);
  });

  it('rolls back only the write that throws; the rest of the batch commits', async () => {
    const db = open();
    const write = createWriteBatcher(db);
    const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
    const outcomes = await Promise.allSettled([
      write(() => insert.run('a')),
      write(() => {
        insert.run('b');
        insert.run('a'); // a constraint error after a successful insert: both of this write's rows go
      }),
      write(() => insert.run('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(db.prepare('SELECT k FROM t ORDER BY k').pluck().all()).toEqual(['a', 'c']);
  });

  it('refuses only the write whose own commit fails', async () => {
    const db = open();
    const write = createWriteBatcher(db);
    // A deferred foreign key is only checked at COMMIT: the batch's commit fails, then each write is tried alone.
    db.exec('CREATE TABLE child (p TEXT REFERENCES t (k) DEFERRABLE INITIALLY DEFERRED)');
    db.pragma('foreign_keys = ON');
    const outcomes = await Promise.allSettled([
      write(() => db.prepare('INSERT INTO t (k) VALUES (?)').run('x')),
      write(() => db.prepare('INSERT INTO child (p) VALUES (?)').run('missing')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect(db.prepare('SELECT k FROM t').pluck().all()).toEqual(['x']);
    expect(db.prepare('SELECT COUNT(*) FROM child').pluck().get()).toBe(0);
  });

  it('rejects every write when nothing can be committed, leaving nothing behind', async () => {
    const db = open();
    const write = createWriteBatcher(db);
    db.pragma('query_only = ON');
    const insert = db.prepare('INSERT INTO t (k) VALUES (?)');
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((k) => write(() => insert.run(k))));
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    db.pragma('query_only = OFF');
    expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(0);
    await write(() => insert.run('d'));
    expect(db.prepare('SELECT k FROM t').pluck().all()).toEqual(['d']);
  });

  it('commits a batch of lazy-sync work alone without waiting for the disk, and anything else with FULL', async () => {
    const db = open();
    db.pragma('synchronous = FULL');
    const write = createWriteBatcher(db);
    // synchronous as each write sees it inside its transaction: 2 is FULL, 1 is NORMAL.
    const level = () => db.pragma('synchronous', { simple: true });
    expect(await Promise.all([write(level, true), write(level, true)])).toEqual([1, 1]);
    expect(await Promise.all([write(level, true), write(level)])).toEqual([2, 2]);
    expect(await write(level)).toBe(2);
    expect(level()).toBe(2);
    db.pragma('query_only = ON');
    await expect(write(() => db.prepare('INSERT INTO t (k) VALUES (?)').run('x'), true)).rejects.toThrow();
    expect(level()).toBe(2); // a failed lazy batch leaves the connection as it found it
  });
});
