import { chmodSync, fchmodSync, fstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/**
 * The data dir holds callers' personal data and the keys: readable by its owner only (docs/reference.md#exposure), the
 * directory 0700 and every file callhook writes in it 0600, also when the directory or the files were there
 * before (a container volume made 0755, files an older version left 0644). Modes are set on these paths explicitly
 * and the process umask is left alone: a umask changes nothing that exists, and it is process-wide, so it would
 * also narrow files callhook writes elsewhere on an operator's behalf (user modules, exports).
 */

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

/**
 * The files callhook writes in the data dir: the SQLite database (store/open.ts) and every file SQLite puts beside
 * it (-wal, -shm, -journal, the serve lock of store/sqlite/serve-lock.ts and its own), the kept keys and a
 * temporary file a killed write left (keys/file.ts), and the default `jsonl` file with the copy an erasure writes
 * beside it (sinks/jsonl/jsonl.ts). Nothing else there is touched: an operator's own files (a config kept beside the
 * data) keep the mode the operator gave them.
 */
const OWN_FILE = /^(?:callhook\.db(?:-.+)?|(?:api-keys|admin-token)(?:\.\d+\.tmp)?|calls\.jsonl(?:\.erase\.tmp)?)$/;

/** POSIX modes mean nothing on Windows, where a chmod only sets or clears the read-only flag. */
const POSIX = process.platform !== 'win32';

/**
 * Creates the data dir owner-only, or makes an existing one so, and makes the files callhook owns in it 0600.
 * Run at start-up by whatever writes there first; cheap enough to run again (a stat a file, a chmod only when a
 * mode is wrong, so a read-only volume already right is no error).
 */
export function prepareDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  if (!POSIX) return;
  setMode(dir, DIR_MODE, 'the data dir');
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!OWN_FILE.test(entry.name)) continue;
    const path = join(dir, entry.name);
    // A symbolic link is followed (chmod would be anyway): a database linked elsewhere is as private there.
    if (entry.isFile() || (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile()))
      setMode(path, FILE_MODE);
  }
}

/**
 * The folder a file callhook writes will be in, before it is opened: the data dir is prepared when the file is
 * inside it; a folder elsewhere that is missing is created owner-only, and one that exists is the operator's, so
 * its mode is left as it is (the file itself is made 0600 by ownerOnlyFd).
 */
export function prepareFolderOf(file: string, dataDir: string): void {
  const inside = relative(resolve(dataDir), resolve(file));
  if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) prepareDataDir(dataDir);
  mkdirSync(dirname(resolve(file)), { recursive: true, mode: DIR_MODE });
}

/**
 * Makes the file at `path` 0600: a database SQLite just created (0644 under the usual umask 022), or one that existed.
 */
export function ownerOnly(path: string): void {
  if (POSIX) setMode(path, FILE_MODE);
}

/** Makes an open file 0600: one that existed with another mode, or one an unusual umask left narrower. */
export function ownerOnlyFd(fd: number, path: string): void {
  if (!POSIX) return;
  if ((fstatSync(fd).mode & 0o777) === FILE_MODE) return;
  try {
    fchmodSync(fd, FILE_MODE);
  } catch (err) {
    throw modeError(path, FILE_MODE, err);
  }
}

function setMode(path: string, mode: number, what?: string): void {
  if ((statSync(path).mode & 0o777) === mode) return;
  try {
    chmodSync(path, mode);
  } catch (err) {
    throw modeError(path, mode, err, what);
  }
}

function modeError(path: string, mode: number, err: unknown, what = ''): Error {
  const code = (err as { code?: unknown }).code ?? (err as Error).message;
  const hint = code === 'EPERM' ? ' (it belongs to another user: chown it to the user callhook runs as)' : '';
  return new Error(
    `cannot make ${what ? `${what} ` : ''}${path} readable by its owner only (mode 0${mode.toString(8)}): ${String(code)}${hint}`,
    { cause: err },
  );
}
