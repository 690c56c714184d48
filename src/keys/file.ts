import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { FILE_MODE, prepareDataDir } from '../data-dir.js';

/**
 * Keys generated when none is configured (docs/reference.md#start-and-set-up): kept in the data dir, readable by the
 * owner only, so the key given to the calling service's dashboard survives restarts.
 */

export const API_KEYS_FILE = 'api-keys';
export const ADMIN_TOKEN_FILE = 'admin-token';

/** The variable that sets the keys a file would otherwise hold. */
const VARIABLE: Record<string, string> = {
  [API_KEYS_FILE]: 'CALLHOOK_API_KEYS',
  [ADMIN_TOKEN_FILE]: 'CALLHOOK_ADMIN_TOKEN',
};

export function generateKey(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

export interface KeyFile {
  keys: string[];
  /** True when this call created the file: the caller prints the key once. */
  created: boolean;
}

/** Reads the keys kept in `dataDir/name`, one per line, creating the file with one new key when it is missing. */
export function ensureKeyFile(dataDir: string, name: string, prefix: string): KeyFile {
  const path = join(dataDir, name);
  if (existsSync(path)) {
    const keys = readKeyFile(path);
    // Not a new key in its place: the old one may be in the sender's settings, and a new one would lock it out.
    if (keys.length === 0)
      throw new Error(
        `${path} holds no key; remove the file to have one generated, or set ${VARIABLE[name] ?? 'the key'}`,
      );
    return { keys, created: false };
  }
  const key = generateKey(prefix);
  writeKeyFile(dataDir, name, [key]);
  return { keys: [key], created: true };
}

export function readKeyFile(path: string): string[] {
  return keyLines(readFileSync(path, 'utf8'));
}

/** One key a line; blank lines and spaces around a key are not part of it. */
export function keyLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/**
 * Written beside the file, synced, and renamed over it: a full disk or a crash mid-write leaves the old keys or the
 * new ones, never an empty file, and a key printed once is on disk before it is printed.
 */
export function writeKeyFile(dataDir: string, name: string, keys: readonly string[]): void {
  prepareDataDir(dataDir);
  const path = join(dataDir, name);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(temp, 'w', FILE_MODE);
    try {
      fchmodSync(fd, FILE_MODE); // a leftover temp file keeps its mode otherwise
      writeFileSync(fd, `${keys.join('\n')}\n`); // all of it, or an error: a short write never lands
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  const dir = openSync(dataDir, 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
