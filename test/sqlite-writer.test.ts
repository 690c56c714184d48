import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { commitInput } from './helpers/store-inputs.js';
import { catchWarnings } from './helpers/warnings.js';
import { openThreaded } from './helpers/writer-thread.js';

/**
 * serve writes the SQLite database file on a thread of its own (src/intake/thread.ts): what that changes
 * for the process, and what happens when the thread cannot run.
 */

describe('the SQLite writer thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callhook-writer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('waits for another connection’s lock without holding up the event loop', async () => {
    const path = join(dir, 'locked.db');
    const { store, close } = openThreaded(path);
    const other = new Database(path);
    try {
      await store.ping();
      other.exec('BEGIN IMMEDIATE');
      const committing = store.commitCall(commitInput('h', 'call_id:waits', []));
      // The lock's holder runs on this very thread: written in place, the commit would block it for the whole
      // busy timeout and fail, as nothing could release the lock meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await store.listCalls({ limit: 10 })).length).toBe(0);
      other.exec('COMMIT');
      const committed = await committing;
      expect(committed.outcome).toBe('accepted');
      expect(await store.getCall(committed.id)).toBeDefined();
    } finally {
      other.close();
      await close();
    }
  });

  it('finishes the writes under way before it closes', async () => {
    const path = join(dir, 'closing.db');
    const { store, close } = openThreaded(path);
    const writes = Array.from({ length: 20 }, (_, i) => store.commitCall(commitInput('h', `call_id:c${i}`, ['jsonl'])));
    await close();
    const results = await Promise.all(writes);
    expect(results.every((r) => r.outcome === 'accepted')).toBe(true);
    const reopened = openSqliteStore({ path });
    try {
      expect((await reopened.listCalls({ limit: 100 })).length).toBe(20);
      expect((await reopened.countDeliveries()).pending).toBe(20);
    } finally {
      await reopened.close();
    }
  });

  it('refuses the writes it was given when its thread fails, and writes in place from then on', async () => {
    const path = join(dir, 'moved.db');
    const moved = join(dir, 'moved-away.db');
    const { store, close } = openThreaded(path);
    try {
      // The store's connection keeps the file it opened; the thread, opening the path, finds nothing there.
      renameSync(path, moved);
      const warnings = catchWarnings('CALLHOOK_THREAD_FAILED');
      await expect(store.commitCall(commitInput('h', 'call_id:first', []))).rejects.toThrow(
        'the SQLite writer thread failed: SQLITE_CANTOPEN',
      );
      expect(warnings.map((w) => w.message)).toEqual([
        'the SQLite writer thread failed: SQLITE_CANTOPEN; writes are made on the event loop from now on',
      ]);
      const second = await store.commitCall(commitInput('h', 'call_id:second', []));
      expect(second.outcome).toBe('accepted');
      expect((await store.commitCall(commitInput('h', 'call_id:second', []))).outcome).toBe('duplicate');
      await store.ping();
    } finally {
      renameSync(moved, path);
      await close();
    }
    const check = new Database(path, { readonly: true });
    try {
      expect(check.prepare('SELECT dedup_key, duplicates FROM calls').all()).toEqual([
        { dedup_key: 'call_id:second', duplicates: 1 },
      ]);
    } finally {
      check.close();
    }
  });
});
