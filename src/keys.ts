import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Keys generated when none is configured (contract section 1): kept in the data dir, readable by the owner only,
 * so the key given to the calling service's dashboard survives restarts.
 */

export const API_KEYS_FILE = 'api-keys';
export const ADMIN_TOKEN_FILE = 'admin-token';

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
  if (existsSync(path)) return { keys: readKeyFile(path), created: false };
  const key = generateKey(prefix);
  writeKeyFile(dataDir, name, [key]);
  return { keys: [key], created: true };
}

export function readKeyFile(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
}

export function writeKeyFile(dataDir: string, name: string, keys: readonly string[]): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, name);
  writeFileSync(path, `${keys.join('\n')}\n`, { mode: 0o600 });
  chmodSync(path, 0o600); // writeFileSync keeps the mode of a file that already exists
}
