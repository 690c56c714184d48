import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, webhookKey } from '../src/cli/context.js';
import { loadConfig } from '../src/config.js';
import { readKeyFile } from '../src/keys/file.js';
import { postgresKeptKeys } from '../src/store/postgres/kept-keys.js';
import { runCallhook } from './helpers/cli.js';
import { KEY, post, sampleCall, spawnServer, startServer, type TestServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * Keys callhook keeps when none is configured (docs/reference.md#start-and-set-up): a running serve reads them again
 * within 2 s, from the data dir's file or, with DATABASE_URL, from the database every replica shares.
 */

const GENERATED = { CALLHOOK_API_KEYS: '', CALLHOOK_ADMIN_TOKEN: '' };
/**
 * The documented 2 s (docs/reference.md#start-and-set-up), and room for a loaded machine; the tests poll for the
 * condition within it.
 */
const WITHIN = { timeoutMs: 5_000, everyMs: 100 };

const status = async (url: string, key: string) => (await post(url, sampleCall(), { key })).status;
const accepted = (url: string, key: string) => until(async () => (await status(url, key)) === 200, WITHIN);
// A refused key may be answered 429 once the address has failed often enough (auth-limit.ts): refused either way.
const refused = (url: string, key: string) => until(async () => (await status(url, key)) !== 200, WITHIN);
const generate = async (env: Record<string, string>, ...args: string[]) => {
  const result = await runCallhook(['keys', 'generate', ...args], env);
  expect(result.code, result.stderr).toBe(0);
  return { key: result.stdout.trim(), notes: result.stderr };
};

describe('keys kept in the data dir', () => {
  it('a key from `keys generate` works on the running serve at once, beside the old one; --replace drops the old one', async () => {
    const server = await startServer({ env: GENERATED });
    try {
      const env = { CALLHOOK_DATA_DIR: server.dataDir };
      const [first] = readKeyFile(join(server.dataDir, 'api-keys'));
      const { key: second } = await generate(env);
      await accepted(server.url, second);
      expect(await status(server.url, first!)).toBe(200);

      // Read while serving, and a secret all the same: an admin reply that would quote it masks it.
      const [token] = readKeyFile(join(server.dataDir, 'admin-token'));
      const call = await (
        await post(server.url, sampleCall({ call_summary: `The caller read out ${second}.` }), { key: second })
      ).json();
      const shown = await (
        await fetch(`${server.url}/admin/calls/${call.id}`, { headers: { authorization: `Bearer ${token}` } })
      ).text();
      expect(shown).toContain('The caller read out ***.');
      expect(shown).not.toContain(second);

      const { key: third } = await generate(env, '--replace');
      await refused(server.url, first!);
      expect(await status(server.url, second)).not.toBe(200);
      expect(await status(server.url, third)).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('emptied by hand, keeps the last keys working and logs one warning that names the file, not the key', async () => {
    const dataDir = tempDir();
    const server = await spawnServer(dataDir, { ...GENERATED, LOG_LEVEL: 'warn' });
    try {
      const path = join(dataDir, 'api-keys');
      const [key] = readKeyFile(path);
      writeFileSync(path, '\n');
      const warnings = () =>
        server
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{') && JSON.parse(line).level === 40);
      await until(() => warnings().length > 0, WITHIN);
      expect(await status(server.url, key!)).toBe(200);
      await new Promise((r) => setTimeout(r, 2_500)); // two more polls of the same empty file
      expect(warnings()).toHaveLength(1);
      expect(JSON.parse(warnings()[0]!)).toMatchObject({
        msg: `webhook keys: ${path} holds no key; what was accepted before stays accepted`,
      });
      expect(warnings()[0]).not.toContain(key);
      expect(await status(server.url, key!)).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('`keys generate` says the key works at once, and reminds that CALLHOOK_API_KEYS is not the file', async () => {
    const dataDir = tempDir();
    const { notes } = await generate({ CALLHOOK_DATA_DIR: dataDir });
    expect(notes).toContain(
      `note: kept in ${join(dataDir, 'api-keys')}. A running callhook serve that keeps its keys there accepts it within 2 s, without a restart`,
    );
    expect(notes).toContain(`note: a serve started with CALLHOOK_API_KEYS does not read ${join(dataDir, 'api-keys')}.`);
    expect(notes).not.toContain('is set here');

    const { notes: withVariable } = await generate({ CALLHOOK_DATA_DIR: dataDir, CALLHOOK_API_KEYS: KEY });
    expect(withVariable).toContain(
      'note: CALLHOOK_API_KEYS (or api_keys in the config) is set here: a serve started like this accepts those keys, not this one.',
    );
  });
});

const url = serviceUrl('postgres');

describe.skipIf(!url)('keys kept in PostgreSQL, shared by replicas', () => {
  const database = `callhook_keys_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string;
  let admin: pg.Client;
  let replicas: TestServer[] = [];
  /** A command run from a machine of its own: nothing in its data dir. */
  const elsewhere = () => ({ DATABASE_URL: databaseUrl, CALLHOOK_DATA_DIR: tempDir() });

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const u = new URL(url!);
    u.pathname = `/${database}`;
    databaseUrl = u.toString();
    // Started together, each with a data dir of its own and no key configured.
    replicas = await Promise.all(
      [0, 1, 2].map(() => startServer({ env: { ...GENERATED, DATABASE_URL: databaseUrl } })),
    );
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await admin.end();
  });

  it('accept the same generated key and admin token, printed by exactly one of them and kept in no data dir', async () => {
    const printing = replicas.filter((r) => r.printed.some((line) => line.includes('Bearer ')));
    expect(printing).toHaveLength(1);
    const printed = printing[0]!.printed.join('\n');
    const [key, token] = [...printed.matchAll(/Bearer (\S+)/g)].map((m) => m[1]!);
    expect(printed).toContain('generated webhook key (shown once, kept in the database (meta row "api-keys")):');
    for (const replica of replicas) {
      expect(await status(replica.url, key!)).toBe(200);
      expect(
        (await fetch(`${replica.url}/admin/calls`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      expect(['api-keys', 'admin-token'].filter((file) => existsSync(join(replica.dataDir, file)))).toEqual([]);
    }
    // The CLI finds them as serve does: simulate, replay and the admin commands use these.
    const config = loadConfig(elsewhere());
    expect([await webhookKey(config), await adminToken(config)]).toEqual([key, token]);
  });

  it('accept a key from `keys generate` against the database within 2 s, and drop the old ones on --replace', async () => {
    const config = loadConfig(elsewhere());
    const old = (await webhookKey(config))!;
    const { key, notes } = await generate(elsewhere());
    expect(notes).toContain('note: kept in the database (meta row "api-keys").');
    for (const replica of replicas) await accepted(replica.url, key);
    for (const replica of replicas) expect(await status(replica.url, old)).toBe(200);
    expect((await runCallhook(['keys', 'show'], elsewhere())).stdout.trim().split('\n')).toEqual([key, old]);

    const { key: only } = await generate(elsewhere(), '--replace');
    for (const replica of replicas) await refused(replica.url, old);
    for (const replica of replicas) expect(await status(replica.url, only)).toBe(200);
    expect(await webhookKey(config)).toBe(only);
  });

  it('keep one set of keys however many replicas offer theirs at once', async () => {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    // pool.end() settles before its connections have closed; the database dropped by afterAll can then end one with
    // "terminating connection due to administrator command", which the pool re-emits: unheard, a crash of the run.
    pool.on('error', () => undefined);
    try {
      const kept = postgresKeptKeys(pool);
      const offers = await Promise.all(Array.from({ length: 10 }, (_, i) => kept.ensure('race-test', [`offer-${i}`])));
      expect(offers.filter((o) => o.created)).toHaveLength(1);
      expect(new Set(offers.map((o) => o.keys.join()))).toEqual(new Set([offers.find((o) => o.created)!.keys.join()]));
    } finally {
      await pool.end();
    }
  });
});
