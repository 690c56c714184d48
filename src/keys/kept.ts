import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeptKeysStore } from '../store/store.js';
import {
  ADMIN_TOKEN_FILE,
  API_KEYS_FILE,
  ensureKeyFile,
  generateKey,
  keyLines,
  readKeyFile,
  writeKeyFile,
} from './file.js';

/**
 * Where callhook keeps the keys it generated (docs/reference.md#start-and-set-up): a file in the data dir, or with
 * DATABASE_URL a row of the database, so that every replica accepts the same keys. Both have one shape, so serve, the
 * follow loop and the CLI never ask which.
 */

export type KeyName = typeof API_KEYS_FILE | typeof ADMIN_TOKEN_FILE;

/** What a poll found: the keys kept now, nothing changed since the last poll, or why they cannot be used. */
export type Polled = { keys: string[] } | { unchanged: true } | { problem: string };

export interface KeptKeys {
  /** Where they are kept, for messages: the file's path, or the database's row. Never a key. */
  readonly where: string;
  /**
   * The keys kept; when none are yet, new ones are kept first, and `generated` is the key this call made (the
   * caller prints it once). Fails when what is kept holds no key: a new key in its place could lock out the sender.
   */
  ensure(prefix: string): Promise<{ keys: string[]; generated?: string }>;
  /** The keys kept, or undefined when none ever were. */
  read(): Promise<string[] | undefined>;
  /** Keeps a new key first, before the others, or alone when `replace`. */
  add(key: string, replace: boolean): Promise<void>;
  /** For a running serve, about once a second: cheap when nothing changed. */
  poll(): Promise<Polled>;
}

/** The variable that stands in for what `name` keeps, for messages. */
const VARIABLE: Record<KeyName, string> = {
  [API_KEYS_FILE]: 'CALLHOOK_API_KEYS',
  [ADMIN_TOKEN_FILE]: 'CALLHOOK_ADMIN_TOKEN',
};

/** In the database when the store keeps keys (PostgreSQL), else in the data dir. */
export function keptKeys(name: KeyName, { dataDir, store }: { dataDir: string; store?: KeptKeysStore }): KeptKeys {
  return store ? inDatabase(name, dataDir, store) : inFile(name, dataDir);
}

function inFile(name: KeyName, dataDir: string): KeptKeys {
  const path = join(dataDir, name);
  // A poll reads the file only when its identity, size or times changed. An editor that saves by writing a new
  // file and renaming it over the old one (and writeKeyFile does just that) changes the inode, which an fs.watch
  // on the old file would miss; a stat a second costs next to nothing and sees every kind of change.
  let seen: string | undefined;
  return {
    where: path,
    ensure: async (prefix) => {
      const file = ensureKeyFile(dataDir, name, prefix);
      return { keys: file.keys, generated: file.created ? file.keys[0] : undefined };
    },
    read: async () => (existsSync(path) ? readKeyFile(path) : undefined),
    add: async (key, replace) => {
      const kept = !replace && existsSync(path) ? readKeyFile(path) : [];
      writeKeyFile(dataDir, name, [key, ...kept]);
    },
    poll: async () => {
      let version: string;
      let text: string;
      try {
        const s = await stat(path);
        version = `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
        if (version === seen) return { unchanged: true };
        text = await readFile(path, 'utf8');
      } catch (err) {
        seen = undefined; // read it again once it is back, whatever its times
        return { problem: `cannot be read (${(err as { code?: string }).code ?? (err as Error).message})` };
      }
      seen = version;
      const keys = keyLines(text);
      return keys.length > 0 ? { keys } : { problem: 'holds no key' };
    },
  };
}

function inDatabase(name: KeyName, dataDir: string, store: KeptKeysStore): KeptKeys {
  const where = `the database (meta row "${name}")`;
  return {
    where,
    ensure: async (prefix) => {
      // A data dir that already holds keys (a serve that ran on SQLite before DATABASE_URL was set) offers them
      // rather than a new key: the sender may have one of them, and a replica that starts first with them keeps
      // them for all. Only a key made here is printed.
      const file = join(dataDir, name);
      const local = existsSync(file) ? readKeyFile(file) : [];
      const made = local.length > 0 ? undefined : generateKey(prefix);
      const { keys, created } = await store.ensure(name, made ? [made] : local);
      if (keys.length === 0)
        throw new Error(`${where} holds no key; delete that row to have one generated, or set ${VARIABLE[name]}`);
      return { keys, generated: created ? made : undefined };
    },
    read: () => store.read(name),
    add: (key, replace) => store.add(name, key, replace),
    // One indexed row a second: as cheap as a stat, and it has no times to compare.
    poll: async () => {
      const keys = await store.read(name);
      return keys && keys.length > 0 ? { keys } : { problem: 'holds no key' };
    },
  };
}
