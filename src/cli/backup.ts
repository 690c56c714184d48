import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Command } from 'commander';
import { sqlitePath } from '../store/open.js';
import { commandConfig, progressLine } from './context.js';
import type { CommandIo } from './io.js';

/** Pages copied a step (4 MiB of 4 KiB pages): between two steps a terminal's progress line moves. */
const STEP = 1024;
/** sqlite3_backup_step's "every page left", in the range better-sqlite3 takes. */
const ALL = 0x7fffffff;

/**
 * `callhook backup FILE [--force]` (docs/reference.md#command-line): a consistent copy of the SQLite store, made while
 * `serve` runs and keeps committing, with SQLite's online backup (https://sqlite.org/backup.html). The copy is written
 * beside FILE under another name, readable by its owner alone (it holds every caller's number), and given FILE's name
 * only once whole: an interrupted backup never leaves a half copy that looks like one. FILE is never replaced without
 * `--force`. With DATABASE_URL the store is PostgreSQL, whose own tool makes its backups.
 */
export function backupCommand(io: CommandIo): Command {
  return new Command('backup')
    .description('a consistent copy of the SQLite store, while serve runs (with DATABASE_URL, use pg_dump)')
    .argument('<file>', 'where the copy goes')
    .option('--force', 'replace FILE if it exists')
    .option('-c, --config <file>', 'config file')
    .action(async (file: string, opts: { force?: boolean; config?: string }) => {
      const config = commandConfig(io.env, opts.config);
      if (config.databaseUrl)
        throw new Error(
          `backup copies a SQLite store, and this one is PostgreSQL (DATABASE_URL): use pg_dump, such as pg_dump --format=custom --file=${file} "$DATABASE_URL"`,
        );
      const source = sqlitePath(config.dataDir);
      if (!existsSync(source)) throw new Error(`no store at ${source}: nothing to back up`);
      const dest = resolve(file);
      if (dest === resolve(source)) throw new Error(`${file} is the store itself: name another file`);
      if (existsSync(dest) && (!opts.force || statSync(dest).isDirectory()))
        throw new Error(
          opts.force
            ? `${file} is a directory: name a file`
            : `${file} exists: name another file, or --force to replace it`,
        );
      const line = progressLine(io.stderr);
      try {
        const { calls, bytes } = await copyStore(source, dest, {
          replace: Boolean(opts.force),
          onProgress: line && ((copied, total) => line.show(`backup: ${Math.floor((100 * copied) / total)}%`)),
        });
        line?.clear();
        io.out.print(`backed up ${calls} calls to ${file} (${bytes} bytes)`);
      } catch (err) {
        line?.clear();
        throw err;
      }
    });
}

/**
 * Copies the store at `source` to `dest`: into a file of mode 0600 beside it, then renamed (or, not replacing, linked,
 * which fails rather than replaces a file made meanwhile). The copy is one file in rollback-journal mode, to be kept,
 * moved or opened alone; a serve started on it turns WAL on again.
 */
async function copyStore(
  source: string,
  dest: string,
  { replace, onProgress }: { replace: boolean; onProgress?: (copied: number, total: number) => void },
): Promise<{ calls: number; bytes: number }> {
  const partial = join(dirname(dest), `.${basename(dest)}.${randomBytes(4).toString('hex')}.partial`);
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    // Exactly 0600 whatever the umask: a mask that took the owner's write bit away would stop the copy itself.
    chmodSync(partial, 0o600);
    const db = new Database(source, { readonly: true, fileMustExist: true });
    try {
      let copied = -1;
      await db.backup(partial, {
        progress: ({ totalPages, remainingPages }) => {
          const now = totalPages - remainingPages;
          onProgress?.(now, totalPages);
          // A write by serve between two steps starts the copy again from the first page, so under steady traffic
          // a copy by steps might never end. Once that has happened, the rest goes in one step: one read of one
          // snapshot, which in WAL mode keeps no writer waiting.
          if (now <= copied) return ALL;
          copied = now;
          return STEP;
        },
      });
    } finally {
      db.close();
    }
    const copy = new Database(partial, { fileMustExist: true });
    let calls: number;
    try {
      copy.pragma('journal_mode = DELETE');
      calls = copy.prepare('SELECT count(*) FROM calls').pluck().get() as number;
    } finally {
      copy.close();
    }
    const bytes = statSync(partial).size;
    if (replace) renameSync(partial, dest);
    else placeNew(partial, dest);
    syncDirectory(dirname(dest));
    return { calls, bytes };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new Error(`${dest} was made while the copy was: name another file, or --force to replace it`);
    throw err;
  } finally {
    for (const leftover of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`])
      rmSync(leftover, { force: true });
  }
}

/**
 * Gives `partial` the name `dest` unless a file has that name: a hard link fails rather than replace one made since
 * the check; where the file system has no hard links (some network and FUSE mounts), the check and a rename.
 */
function placeNew(partial: string, dest: string): void {
  try {
    linkSync(partial, dest);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    if (existsSync(dest)) throw Object.assign(new Error(`${dest} exists`), { code: 'EEXIST' });
    renameSync(partial, dest);
  }
}

/** The new name survives a power cut only once the directory that holds it is on disk. */
function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
