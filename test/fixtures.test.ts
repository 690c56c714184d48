import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../src/cli/fixtures.js';
import { type ReplayResult, replay } from '../src/cli/replay.js';
import { ADMIN, KEY, startServer, type TestServer } from './helpers/server.js';

/**
 * The fixture set of docs/reference.md#fixtures, replayed by `callhook replay` against a real receiver: every reply and
 * every stored record must be what the fixture says. The set is replayed twice against one server; `{{run}}`
 * makes each run's calls new, so the second run passes too (and the duplicate case is a duplicate in both).
 */

const DIR = 'fixtures';
const fixtures = loadFixtures([DIR]);

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

const run = () => replay([DIR], { url: server.url, key: KEY, adminToken: ADMIN, print: () => {} });
const failures = (results: ReplayResult[]) =>
  results.filter((r) => !r.ok).map((r) => `${r.file}: ${r.failures.join('; ')}`);
const resultOf = (results: ReplayResult[], name: RegExp) => {
  const found = results.find((r) => name.test(r.file));
  if (!found) throw new Error(`no fixture matches ${name}`);
  return found;
};
const stored = async (id: string) => {
  const res = await fetch(`${server.url}/admin/calls/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { record: { data: Record<string, unknown>; extra: Record<string, unknown> } }).record;
};

describe('fixture files', () => {
  it('all load and match the fixture schema', () => {
    expect(() => loadFixtures([DIR])).not.toThrow();
    for (const { file, fixture } of fixtures) {
      expect(file, file).toMatch(/[/\\]\d\d-[a-z0-9-]+\.json$/);
      expect(fixture.description.length, file).toBeGreaterThan(0);
    }
  });

  it('are at least 30 cases covering every encoding, method and failure status', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(30);
    const encodings = new Set(fixtures.map(({ fixture }) => fixture.request.encoding));
    const methods = new Set(fixtures.map(({ fixture }) => fixture.request.method));
    const statuses = new Set(fixtures.map(({ fixture }) => fixture.expect.status));
    for (const encoding of ['json', 'form', 'multipart', 'query']) expect(encodings, encoding).toContain(encoding);
    for (const method of ['POST', 'PUT', 'GET', 'DELETE']) expect(methods, method).toContain(method);
    for (const status of [200, 400, 401, 404, 405, 413, 415]) expect(statuses, String(status)).toContain(status);
  });

  it('send GET and DELETE fields in the query only, and give every accepted call a per-run dedup value', () => {
    for (const { file, fixture } of fixtures) {
      const { method, encoding, body, raw_body } = fixture.request;
      if (method === 'GET' || method === 'DELETE') {
        expect(encoding, file).toBe('query');
        expect(body ?? raw_body, file).toBeUndefined();
      }
      if (fixture.expect.status === 200) expect(JSON.stringify(fixture.request), file).toContain('{{run}}');
    }
  });
});

describe('callhook replay of fixtures/', () => {
  let first: ReplayResult[];

  it('passes every case against a fresh receiver', async () => {
    first = await run();
    expect(first).toHaveLength(fixtures.length);
    expect(failures(first)).toEqual([]);
  });

  it('gives the hash dedup key when neither call_id nor recording_url is present', () => {
    const reply = resultOf(first, /dedup-sha256\.json$/).reply as { dedup_key?: unknown };
    expect(reply.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('tells a repeat from a conflict and never merges empty calls or two calls about one order (docs/reference.md#deduplication)', () => {
    type Reply = { id: string; status: string; dedup_key: string | null; conflicts_with?: string };
    const reply = (pattern: RegExp) => resultOf(first, pattern).reply as Reply;
    const original = reply(/01-json-post-complete\.json$/);
    expect(reply(/38-duplicate-of-01\.json$/).id).toBe(original.id);
    const conflict = reply(/70-conflict-with-01\.json$/);
    expect(conflict.conflicts_with).toBe(original.id);
    expect(conflict.id).not.toBe(original.id);
    expect(conflict.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(reply(/71-conflict-repeated\.json$/)).toMatchObject({
      status: 'duplicate',
      id: conflict.id,
      dedup_key: conflict.dedup_key,
    });
    const empties = [reply(/72-empty-call\.json$/), reply(/73-empty-call-again\.json$/), reply(/74-empty-body\.json$/)];
    expect(new Set(empties.map((r) => r.id)).size).toBe(3);
    expect(reply(/76-same-order-cancelled\.json$/).id).not.toBe(reply(/75-order-placed\.json$/).id);
  });

  it('stores "__proto__" and "constructor" as plain own keys of extra', async () => {
    const { reply, file } = resultOf(first, /proto-constructor-keys\.json$/);
    const { id } = reply as { id: string };
    const record = await stored(id);
    expect(Object.keys(record.extra).sort(), file).toEqual(['__proto__', 'call_id', 'constructor', 'meta']);
    expect(Object.hasOwn(record.extra, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(record.extra, '__proto__')?.value).toEqual({
      is_admin: true,
      first_name: 'Mallory',
    });
    expect(record.extra.constructor).toEqual({ prototype: { polluted: true } });
    const meta = record.extra.meta as Record<string, unknown>;
    expect(Object.hasOwn(meta, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(meta, '__proto__')?.value).toEqual({ nested: 1 });
    expect(record.data.first_name).toBe('Asha');
    expect(({} as Record<string, unknown>).is_admin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('passes again when the whole set is replayed against the same receiver ({{run}} isolation)', async () => {
    const second = await run();
    expect(second).toHaveLength(fixtures.length);
    expect(failures(second)).toEqual([]);
    // A new run id means new calls: the same files did not come back as duplicates of the first run.
    const accepted = (results: ReplayResult[]) =>
      results
        .filter((r) => (r.reply as { status?: unknown })?.status === 'accepted')
        .map((r) => (r.reply as { id: string }).id);
    const again = new Set(accepted(second));
    expect(accepted(first).filter((id) => again.has(id))).toEqual([]);
  });
});
