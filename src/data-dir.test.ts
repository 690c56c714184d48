import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerOnly, ownerOnlyFd, prepareDataDir, prepareFolderOf } from './data-dir.js';
import { ADMIN_TOKEN_FILE, API_KEYS_FILE } from './keys/file.js';
import { SQLITE_FILE } from './store/open.js';

const temp = () => mkdtempSync(join(tmpdir(), 'callhook-data-dir-'));
const mode = (path: string) => statSync(path).mode & 0o777;
const modes = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, mode(join(dir, name))]));

/** What an older version, or an operator, left: a directory anyone can list and files anyone can read. */
function leftOpen(dir: string, names: string[]): void {
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o755);
  for (const name of names) {
    writeFileSync(join(dir, name), 'x');
    chmodSync(join(dir, name), 0o644);
  }
}

// The usual umask, which leaves new files 0644 and new folders 0755: what the modes must not depend on. Set in this
// test file's process (a vitest fork) and put back afterwards.
let umask: number;
beforeAll(() => void (umask = process.umask(0o022)));
afterAll(() => void process.umask(umask));

describe('prepareDataDir', () => {
  it('creates a missing data dir, and its missing parents, owner-only', () => {
    const dir = join(temp(), 'volume', 'data');
    prepareDataDir(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, '..'))).toBe(0o700);
  });

  it('makes an existing 0755 dir 0700 and every file callhook writes in it 0600, leaving the operator’s own files alone', () => {
    const dir = join(temp(), 'data');
    const own = [
      SQLITE_FILE,
      `${SQLITE_FILE}-wal`,
      `${SQLITE_FILE}-shm`,
      `${SQLITE_FILE}-journal`,
      `${SQLITE_FILE}-serve.lock`,
      API_KEYS_FILE,
      ADMIN_TOKEN_FILE,
      `${API_KEYS_FILE}.1234.tmp`,
      'calls.jsonl',
    ];
    leftOpen(dir, [...own, 'config.json', 'notes.txt']);
    mkdirSync(join(dir, 'exports'), { mode: 0o755 });
    chmodSync(join(dir, 'exports'), 0o755);

    prepareDataDir(dir);

    expect(mode(dir)).toBe(0o700);
    expect(modes(dir)).toEqual({
      ...Object.fromEntries(own.map((name) => [name, 0o600])),
      'config.json': 0o644,
      'notes.txt': 0o644,
      exports: 0o755,
    });
  });

  it('follows a database linked from elsewhere, and is a no-op when every mode is already right', () => {
    const dir = temp();
    const elsewhere = join(temp(), 'real.db');
    writeFileSync(elsewhere, '');
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, join(dir, SQLITE_FILE));
    prepareDataDir(dir);
    expect(mode(elsewhere)).toBe(0o600);
    const before = statSync(dir).ctimeMs;
    prepareDataDir(dir);
    expect(statSync(dir).ctimeMs).toBe(before);
  });
});

describe('prepareFolderOf', () => {
  it('prepares the data dir for a file inside it', () => {
    const dir = join(temp(), 'data');
    leftOpen(dir, [SQLITE_FILE]);
    prepareFolderOf(join(dir, 'calls.jsonl'), dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, SQLITE_FILE))).toBe(0o600);
  });

  it('creates a missing folder elsewhere 0700, and leaves one that exists (the operator’s) and the data dir as they are', () => {
    const dataDir = join(temp(), 'data');
    leftOpen(dataDir, []);
    const other = temp();
    chmodSync(other, 0o755);
    prepareFolderOf(join(other, 'exports', 'daily', 'calls.jsonl'), dataDir);
    expect(mode(join(other, 'exports'))).toBe(0o700);
    expect(mode(join(other, 'exports', 'daily'))).toBe(0o700);
    expect(mode(other)).toBe(0o755);
    expect(mode(dataDir)).toBe(0o755);
  });
});

describe('ownerOnly', () => {
  it('makes a file 0600 by path or by descriptor', () => {
    const dir = temp();
    const byPath = join(dir, 'a');
    const byFd = join(dir, 'b');
    leftOpen(dir, ['a', 'b']);
    ownerOnly(byPath);
    const fd = openSync(byFd, 'a');
    try {
      ownerOnlyFd(fd, byFd);
    } finally {
      closeSync(fd);
    }
    expect([mode(byPath), mode(byFd)]).toEqual([0o600, 0o600]);
  });
});

describe('SQLite', () => {
  it('gives the -wal, -shm and -journal files it creates the mode of the database, not the umask’s', () => {
    const dir = temp();
    const wal = new Database(join(dir, 'wal.db'));
    const journal = new Database(join(dir, 'journal.db'));
    try {
      expect(mode(join(dir, 'wal.db'))).toBe(0o644);
      ownerOnly(join(dir, 'wal.db'));
      ownerOnly(join(dir, 'journal.db'));
      wal.pragma('journal_mode = WAL');
      wal.exec('CREATE TABLE t (x)');
      journal.exec('CREATE TABLE t (x); BEGIN; INSERT INTO t VALUES (1)');
      expect(modes(dir)).toEqual({
        'wal.db': 0o600,
        'wal.db-wal': 0o600,
        'wal.db-shm': 0o600,
        'journal.db': 0o600,
        'journal.db-journal': 0o600,
      });
    } finally {
      wal.close();
      journal.close();
    }
  });
});
