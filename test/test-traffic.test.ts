import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredCall } from '../src/store/admin-queries.js';
import { DESKTOP, launchChromium, newContext, PHONE, seriousViolations, signIn } from './helpers/browser.js';
import { runCallhook } from './helpers/cli.js';
import { freshDatabase, type StoreUnderTest, storesUnderTest } from './helpers/database.js';
import {
  ADMIN,
  adminApi,
  jsonlRecords,
  KEY,
  post,
  sampleCall,
  startServer,
  type TestServer,
  tempDir,
} from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';

/**
 * Test traffic as a user meets it (docs/reference.md#test-traffic): the README invites `callhook replay fixtures/`
 * against the running receiver. What it sends is stored and can be checked, reaches the `jsonl` file, and stays out of
 * a `postgres` table that has no `when`, of the overview's figures, of the review queue and of the calls list until
 * the operator asks for it. Over real HTTP, on each store, with a real PostgreSQL table as the sink, the CLI run
 * in-process and the dashboard in Chromium.
 */

const postgres = serviceUrl('postgres');
// Screenshots to look at, not to keep: the calls page with and without test calls, at phone and desktop width.
const SHOTS = mkdtempSync(join(tmpdir(), 'callhook-test-traffic-shots-'));

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 120_000);
afterAll(() => browser?.close(), 60_000);

/** Rows of a table in the sink's database, 0 while the sink has not made it. */
async function rows(url: string, table: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const made = await client.query<{ t: string | null }>('SELECT to_regclass($1) AS t', [table]);
    if (made.rows[0]!.t === null) return [];
    return (await client.query<{ id: string }>(`SELECT id::text FROM ${table} ORDER BY id`)).rows.map((r) => r.id);
  } finally {
    await client.end();
  }
}

async function listAll(server: TestServer, query: string): Promise<StoredCall[]> {
  const calls: StoredCall[] = [];
  for (let after = ''; ; ) {
    const { status, body } = await adminApi<{ calls: StoredCall[]; next: string | null }>(
      server,
      `/calls?limit=500&${query}${after && `&after=${after}`}`,
    );
    expect(status).toBe(200);
    calls.push(...body.calls);
    if (!body.next) return calls;
    after = body.next;
  }
}

describe.skipIf(!postgres).each(storesUnderTest(postgres, 'callhook_tt'))(
  'test traffic on the %s store',
  { timeout: 240_000 },
  (storeName, open) => {
    let store: StoreUnderTest;
    let target: { url: string; drop(): Promise<void> };
    let server: TestServer;
    let dataDir: string;
    let replayed: StoredCall[];
    let realId: string;

    beforeAll(async () => {
      store = await open();
      target = await freshDatabase(postgres!, 'callhook_tt_sink');
      dataDir = tempDir();
      server = await startServer({
        env: store.env,
        dataDir,
        config: {
          sinks: [
            // The sinks a user adds to a receiver they tried: a table of calls with no `when`, and the file.
            { name: 'warehouse', type: 'postgres', url: target.url },
            { name: 'file', type: 'jsonl', path: join(dataDir, 'calls.jsonl') },
            // One that asks for test traffic, and a file that says it wants none.
            { name: 'rehearsal', type: 'postgres', url: target.url, table: 'rehearsal_calls', test_traffic: true },
            { name: 'real-only', type: 'jsonl', path: join(dataDir, 'real.jsonl'), test_traffic: false },
          ],
        },
      });
    }, 120_000);
    afterAll(async () => {
      await server?.close();
      await target?.drop();
      await store?.drop();
    }, 60_000);

    it('stores what `callhook replay fixtures/` sends, delivers it to the jsonl file and to a sink with test_traffic: true, never to the postgres table without it', async () => {
      const replay = await runCallhook(
        ['replay', 'fixtures/', '--url', server.url, '--key', KEY, '--admin-token', ADMIN],
        { CALLHOOK_DATA_DIR: dataDir },
      );
      expect(replay.stderr).toBe('');
      expect(replay.code, replay.stdout).toBe(0);

      replayed = await listAll(server, 'source=replay');
      expect(replayed.length).toBeGreaterThan(40);
      const ids = replayed.map((c) => c.record.id).sort();

      // The worker has run: every replayed call is in the file and in the table that takes test traffic.
      await expect
        .poll(() => jsonlRecords(dataDir, 'calls.jsonl').length, { timeout: 60_000, interval: 100 })
        .toBe(ids.length);
      expect(
        jsonlRecords(dataDir, 'calls.jsonl')
          .map((r) => r.id)
          .sort(),
      ).toEqual(ids);
      await expect.poll(() => rows(target.url, 'rehearsal_calls'), { timeout: 60_000, interval: 200 }).toEqual(ids);
      // And no delivery was ever made for the others: the table without test_traffic is empty, the file that refused
      // test traffic too.
      expect(await rows(target.url, 'callhook_calls')).toEqual([]);
      expect(jsonlRecords(dataDir, 'real.jsonl')).toEqual([]);
      const deliveries = async (sink: string) =>
        (await adminApi(server, `/deliveries?sink=${sink}&limit=500`)).body.deliveries as unknown[];
      expect(await deliveries('warehouse')).toEqual([]);
      expect(await deliveries('real-only')).toEqual([]);
      const { body } = await adminApi(server, '/sinks');
      expect(body.sinks.every((s: { deliveries: { pending: number } }) => s.deliveries.pending === 0)).toBe(true);
    });

    it('delivers a real webhook call (no source header) to every sink, and the table still holds only that call', async () => {
      const reply = await post(server.url, sampleCall({ first_name: 'Asha', call_outcome: 'order placed' }));
      expect(reply.status).toBe(200);
      realId = ((await reply.json()) as { id: string }).id;
      await expect.poll(() => rows(target.url, 'callhook_calls'), { timeout: 60_000, interval: 200 }).toEqual([realId]);
      await expect
        .poll(() => jsonlRecords(dataDir, 'real.jsonl').map((r) => r.id), { timeout: 30_000 })
        .toEqual([realId]);
      await expect
        .poll(() => jsonlRecords(dataDir, 'calls.jsonl').length, { timeout: 30_000 })
        .toBe(replayed.length + 1);
      await expect
        .poll(async () => (await rows(target.url, 'rehearsal_calls')).includes(realId), { timeout: 30_000 })
        .toBe(true);
    });

    it('redelivers a replayed call to the sinks that take test traffic, and refuses to name the table that does not', async () => {
      const id = replayed[0]!.record.id;
      const all = await adminApi(server, `/calls/${id}/redeliver`, { method: 'POST', body: '{}' });
      expect(all.status).toBe(200);
      expect([...all.body.sinks].sort()).toEqual(['file', 'rehearsal']);
      const named = await adminApi(server, `/calls/${id}/redeliver`, {
        method: 'POST',
        body: JSON.stringify({ sinks: ['warehouse'] }),
      });
      expect(named).toEqual({
        status: 400,
        body: {
          error: 400,
          message: `Bad request: sink warehouse does not take test traffic: call ${id} is a test call (source replay); set test_traffic: true on the sink to send it test calls`,
        },
      });
      expect((await adminApi(server, '/deliveries?sink=warehouse&limit=500')).body.deliveries).toHaveLength(1);
    });

    it('lists test calls only when asked, and never queues them for review, though many have problems', async () => {
      expect(replayed.some((c) => c.record.problems.length > 0 || c.status === 'held')).toBe(true);
      expect((await listAll(server, '')).map((c) => c.record.id)).toEqual([realId]);
      expect(await listAll(server, 'test_calls=true')).toHaveLength(replayed.length + 1);
      expect(await listAll(server, 'review=true')).toEqual([]);
      expect(await listAll(server, 'review=true&test_calls=true')).toEqual([]);
      // Its own page shows a test call whole.
      const one = await adminApi(server, `/calls/${replayed[0]!.record.id}`);
      expect(one.body.record).toMatchObject({ id: replayed[0]!.record.id, source: 'replay' });
    });

    for (const [size, viewport] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      it(`shows the operator at ${size} width an overview without the test calls, and the calls page without them until "Show test calls" is ticked`, async () => {
        const context = await newContext(browser, viewport);
        try {
          const page = await context.newPage();
          await signIn(page, server.url);
          // The overview: one call, one request accepted; the replay's refusals and duplicates are not counted.
          expect(await page.getByText('Last 24 hours by outcome (1)').count()).toBe(1);
          const requests = async (label: string) =>
            page
              .getByRole('row', { name: new RegExp(`^${label}`) })
              .getByRole('cell')
              .allTextContents();
          expect(await requests('Accepted')).toEqual(['1', '1']);
          expect(await requests('Duplicate')).toEqual(['0', '0']);
          expect(await requests('Held')).toEqual(['0', '0']);
          expect(await requests('Refused')).toEqual(['0', '0']);
          expect(await seriousViolations(page)).toEqual([]);

          await page.goto(`${server.url}/ui/review`);
          expect(await page.getByText('Nothing to review.').count()).toBe(1);

          await page.goto(`${server.url}/ui/calls`);
          const listed = (page: Page) => page.locator('main table tbody tr');
          expect(await listed(page).count()).toBe(1);
          expect(await page.getByText('test call (replay)').count()).toBe(0);
          const box = page.getByLabel('Show test calls');
          expect(await box.isChecked()).toBe(false);
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: join(SHOTS, `${storeName}-calls-${size}.png`) });

          await box.check();
          await Promise.all([page.waitForURL(/test_calls=true/), page.getByRole('button', { name: 'Filter' }).click()]);
          expect(await page.getByLabel('Show test calls').isChecked()).toBe(true);
          // A page of 50, the newest first: the real call and the replay's last ones, each marked.
          expect(await listed(page).count()).toBe(50);
          expect(await page.getByText('test call (replay)').count()).toBe(49);
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: join(SHOTS, `${storeName}-calls-test-${size}.png`) });
          // The next page keeps the choice.
          await page.getByRole('link', { name: 'Next page' }).click();
          expect(await page.getByLabel('Show test calls').isChecked()).toBe(true);
          expect(await listed(page).count()).toBe(replayed.length + 1 - 50);

          // A test call's page says so plainly, and offers only the sinks that take it.
          await page.goto(`${server.url}/ui/calls/${replayed[0]!.record.id}`);
          expect(await page.getByText('A test call:').count()).toBe(1);
          expect(await page.getByLabel('Redeliver to').locator('option').allTextContents()).toEqual([
            'every sink that wants it',
            'file',
            'rehearsal',
          ]);
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: join(SHOTS, `${storeName}-call-test-${size}.png`) });
        } finally {
          await context.close();
        }
      });
    }
  },
);

describe('test_traffic in the config', () => {
  it('stops start-up naming the key when it is not true or false', async () => {
    await expect(
      startServer({ config: { sinks: [{ name: 'crm', type: 'log', test_traffic: 'yes' }] } }),
    ).rejects.toThrow(/^sinks\[0\] \(crm\)\.test_traffic: test_traffic is true or false$/);
  });
});
