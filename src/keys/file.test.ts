import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_FILE, API_KEYS_FILE, ensureKeyFile, readKeyFile, writeKeyFile } from './file.js';

const dataDir = () => mkdtempSync(join(tmpdir(), 'callhook-keys-'));

describe('key files', () => {
  it('are created once with one key, owner-only, and read back the same afterwards', () => {
    const dir = dataDir();
    const first = ensureKeyFile(dir, API_KEYS_FILE, 'chk');
    expect(first).toEqual({ keys: [expect.stringMatching(/^chk_[\w-]{32}$/)], created: true });
    expect(statSync(join(dir, API_KEYS_FILE)).mode & 0o777).toBe(0o600);
    expect(ensureKeyFile(dir, API_KEYS_FILE, 'chk')).toEqual({ keys: first.keys, created: false });
  });

  it('are replaced whole, with no temporary file left beside them', () => {
    const dir = dataDir();
    writeKeyFile(dir, API_KEYS_FILE, ['old']);
    writeKeyFile(dir, API_KEYS_FILE, ['new', 'old']);
    expect(readKeyFile(join(dir, API_KEYS_FILE))).toEqual(['new', 'old']);
    expect(statSync(join(dir, API_KEYS_FILE)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual([API_KEYS_FILE]);
  });

  it('that hold no key stop start-up with the file and the variable named, instead of a new key', () => {
    const dir = dataDir();
    writeFileSync(join(dir, API_KEYS_FILE), '\n  \n');
    writeFileSync(join(dir, ADMIN_TOKEN_FILE), '');
    expect(() => ensureKeyFile(dir, API_KEYS_FILE, 'chk')).toThrow(
      `${join(dir, API_KEYS_FILE)} holds no key; remove the file to have one generated, or set CALLHOOK_API_KEYS`,
    );
    expect(() => ensureKeyFile(dir, ADMIN_TOKEN_FILE, 'cha')).toThrow(
      /admin-token holds no key; .* or set CALLHOOK_ADMIN_TOKEN$/,
    );
  });
});
