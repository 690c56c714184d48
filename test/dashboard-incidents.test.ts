import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/ids.js';
import { SQLITE_FILE } from '../src/store/open.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { createClock } from '../src/web/time.js';
import { DESKTOP, launchChromium, newContext, overflow, PHONE, seriousViolations, signIn } from './helpers/browser.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * The dashboard's side of the alerts (docs/reference.md#dashboard, docs/reference.md#alerts), in Chromium: the banner
 * of open incidents on every page (and none while none is open), `/ui/incidents` with the open ones first, a dead
 * alert message shown with its error, and Acknowledge, which keeps who did it. The incidents are made through the
 * store on the serve's own SQLite file, as the rules will make them; screenshots go where dashboard-pages.test.ts
 * puts its own (`SCREENSHOTS=docs/screenshots` for docs/dashboard.md).
 */

const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'callhook-screenshots');
/** Whole pages, to look at: never docs/. */
const FULL = join(tmpdir(), 'callhook-screenshots');
const HOUR = 3_600_000;
const BANNER = { name: 'Open incidents' } as const;
/** A channel's error as long and unbroken as a real one can be: it must wrap, not widen the page. */
const LONG_ERROR = `getaddrinfo ENOTFOUND alerts-relay.${'internal-'.repeat(14)}example.com`;

let server: TestServer;
let store: Store;
let browser: Browser;
const clock = createClock('Asia/Kolkata');
const ids = { dead: '', quiet: '', outage: '', held: '' };

/**
 * Four incidents: two open (dead_delivery of crm, whose Slack message went dead and whose PagerDuty one waits for a
 * retry; no_calls of sales, acknowledged already) and two resolved (a store outage, a held call that waited).
 */
async function makeIncidents(now = Date.now()) {
  const open = async (rule: string, key: string | null, at: number, counts: Record<string, number>, summary: string) =>
    (
      await store.openIncident({
        id: newId(at),
        rule,
        key,
        at: new Date(at).toISOString(),
        counts,
        summary,
        channels: ['slack', 'pager'],
      })
    ).incident.id;
  ids.held = await open('held_waiting', 'end-of-call', now - 30 * HOUR, { held: 2 }, 'Calls held on end-of-call');
  await store.resolveIncident('held_waiting', 'end-of-call', new Date(now - 27 * HOUR).toISOString(), ['slack']);
  ids.outage = await open('store_outage', null, now - 5 * HOUR, { refused: 41 }, 'The store could not commit calls');
  await store.resolveIncident('store_outage', null, new Date(now - 4 * HOUR + 12 * 60_000).toISOString(), ['slack']);
  ids.quiet = await open('no_calls', 'sales', now - 2 * HOUR, {}, 'No call has arrived on sales for 2 hours');
  await store.acknowledgeIncident(ids.quiet, 'admin-token', new Date(now - HOUR).toISOString());
  ids.dead = await open('dead_delivery', 'crm', now - 40 * 60_000, { dead: 3 }, 'Deliveries to crm have gone dead');
  await store.countIncident('dead_delivery', 'crm', { dead: 2 }, new Date(now - 5 * 60_000).toISOString());

  // The sender's part, done here: every message sent but the dead incident's two.
  for (const message of await store.claimAlertMessages(100, 60_000)) {
    const dead = message.incident.id === ids.dead;
    const result =
      dead && message.channel === 'slack'
        ? ({ outcome: 'dead', error: LONG_ERROR } as const)
        : dead
          ? ({ outcome: 'retry', error: 'PagerDuty answered 503' } as const)
          : ({ outcome: 'ok' } as const);
    expect(await store.finishAlertMessage(message.id, message.attempt, result, Date.now() + HOUR)).toBe(true);
  }
}

/** No wider than the window, as test/dashboard-width.test.ts checks every other page. */
async function fits(page: Page, width: number) {
  const { scrollWidth, past } = await overflow(page, width);
  expect(past).toEqual([]);
  expect(scrollWidth).toBeLessThanOrEqual(width);
}

describe('dashboard incidents', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(FULL, { recursive: true });
    server = await startServer({
      config: {
        timezone: 'Asia/Kolkata',
        hooks: { 'end-of-call': {}, sales: {} },
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'crm', type: 'log' },
        ],
      },
    });
    store = openSqliteStore({ path: join(server.dataDir, SQLITE_FILE) });
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await store?.close();
    await server?.close();
  }, 60_000);

  describe('at desktop width', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      context = await newContext(browser, DESKTOP);
      page = await context.newPage();
      await signIn(page, server.url);
    }, 120_000);
    afterAll(() => context?.close(), 60_000);

    it('shows no banner while no incident is open, and says so on /ui/incidents', async () => {
      for (const path of ['/ui', '/ui/calls', '/ui/sinks']) {
        expect((await page.goto(`${server.url}${path}`))?.status(), path).toBe(200);
        expect(await page.getByRole('region', BANNER).count(), path).toBe(0);
      }
      await page.goto(`${server.url}/ui/incidents`);
      expect(await page.getByText('No incident is open.').count()).toBe(1);
      expect(await page.locator('h1').count()).toBe(1);
      expect(await seriousViolations(page)).toEqual([]);
    });

    it('shows the open incidents on every page, newest first, with a link to /ui/incidents', async () => {
      await makeIncidents();
      const text = '2 open incidents: dead_delivery (crm), no_calls (sales, acknowledged). See the incidents';
      for (const path of [
        '/ui',
        '/ui/calls',
        '/ui/review',
        '/ui/deliveries',
        '/ui/sinks',
        '/ui/refused',
        '/ui/incidents',
        '/ui/no-such-page',
      ]) {
        await page.goto(`${server.url}${path}`);
        const banner = page.getByRole('region', BANNER);
        expect((await banner.textContent())?.replace(/\s+/g, ' '), path).toContain(text);
      }
      await page.goto(`${server.url}/ui`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'banner-desktop.png') });
      await page.goto(`${server.url}/ui/sinks`);
      await Promise.all([
        page.waitForURL(`${server.url}/ui/incidents`),
        page.getByRole('region', BANNER).getByRole('link', { name: 'See the incidents' }).click(),
      ]);
      expect(await page.locator('h1').textContent()).toBe('Incidents');
    });

    it('lists the open incidents first, then the resolved, with their times, counts and messages', async () => {
      await page.goto(`${server.url}/ui/incidents`);
      const names = await page.locator('section.incident h3').allTextContents();
      expect(names.map((n) => n.replace(/\s+/g, ' ').trim())).toEqual([
        'dead_delivery (crm) open',
        'no_calls (sales) open acknowledged',
        'store_outage resolved',
        'held_waiting (end-of-call) resolved',
      ]);
      const dead = page.locator(`#incident-${ids.dead}`);
      expect(await dead.getByText('dead 5').count()).toBe(1);
      const opened = await store.getIncident(ids.dead);
      // In the config's zone, as every page shows times.
      expect(await dead.locator('dd time').first().textContent()).toBe(clock.show(opened!.openedAt));
      expect(await dead.getByText('Gone dead, never sent: the opened message to slack.').count()).toBe(1);
      const slack = dead.locator('tbody tr').filter({ hasText: 'slack' });
      expect(await slack.locator('td[data-label="State"]').textContent()).toBe('dead');
      expect(await slack.locator('td[data-label="Last error"]').textContent()).toBe(LONG_ERROR);
      const pager = dead.locator('tbody tr').filter({ hasText: 'pager' });
      expect(await pager.locator('td[data-label="State"]').textContent()).toBe('pending');
      expect(await pager.locator('td[data-label="Last error"]').textContent()).toBe('PagerDuty answered 503');

      const quiet = page.locator(`#incident-${ids.quiet}`);
      expect(await quiet.getByText('by admin-token,').count()).toBe(1);
      expect(await quiet.getByRole('button').count()).toBe(0);
      const outage = page.locator(`#incident-${ids.outage}`);
      expect(await outage.getByText('1 h 12 min').count()).toBe(1); // how long it lasted
      expect(await outage.getByText('refused 41').count()).toBe(1);
      expect(await outage.getByRole('button').count()).toBe(0);
      expect(await outage.locator('tbody tr').count()).toBe(3); // opened to slack and pager, resolved to slack

      expect(await seriousViolations(page)).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'incidents-desktop.png') });
      await fits(page, DESKTOP.width);
    });

    it('filters by state and rule', async () => {
      await page.goto(`${server.url}/ui/incidents?state=resolved`);
      expect(await page.locator('section.incident').count()).toBe(2);
      expect(await page.getByRole('heading', { name: 'Open' }).count()).toBe(0);
      await page.goto(`${server.url}/ui/incidents?rule=no_calls`);
      expect(await page.locator('section.incident h3').allTextContents()).toHaveLength(1);
      await page.goto(`${server.url}/ui/incidents?state=open&rule=lost_calls`);
      expect(await page.getByText('No incident of lost_calls is open.').count()).toBe(1);
    });

    it('refuses an acknowledgement posted from another site', async () => {
      const res = await fetch(`${server.url}/ui/incidents/${ids.dead}/ack`, {
        method: 'POST',
        headers: { origin: 'https://evil.example' },
        redirect: 'manual',
      });
      expect(res.status).toBe(403);
      expect((await store.getIncident(ids.dead))?.acknowledgedAt).toBeNull();
    });

    it('acknowledges an open incident: it stays open, and the page and the banner say who', async () => {
      await page.goto(`${server.url}/ui/incidents`);
      await Promise.all([
        page.waitForURL(/\/ui\/incidents\?done=acknowledged/),
        page.getByRole('button', { name: 'Acknowledge dead_delivery (crm)' }).click(),
      ]);
      expect(await page.getByRole('status').textContent()).toMatch(
        /^dead_delivery \(crm\) is acknowledged by admin-token; it stays open until it\s+resolves\.$/,
      );
      const kept = await store.getIncident(ids.dead);
      expect(kept).toMatchObject({ acknowledgedBy: 'admin-token', resolvedAt: null });
      const dead = page.locator(`#incident-${ids.dead}`);
      expect(await dead.getByText('by admin-token,').count()).toBe(1);
      expect(await dead.locator('dd time').nth(2).textContent()).toBe(clock.show(kept!.acknowledgedAt));
      expect(await page.getByRole('button', { name: /^Acknowledge/ }).count()).toBe(0);
      expect(await page.getByRole('region', BANNER).textContent()).toContain(
        'dead_delivery (crm, acknowledged), no_calls (sales, acknowledged)',
      );
      expect(await seriousViolations(page)).toEqual([]);
    });

    it('says why when an incident cannot be acknowledged: resolved already, or no such incident', async () => {
      const post = (id: string) =>
        context.request.post(`${server.url}/ui/incidents/${id}/ack`, { headers: { origin: server.url } });
      const resolved = await post(ids.outage);
      expect(resolved.status()).toBe(409);
      expect(await resolved.text()).toContain('is resolved already: there is nothing to acknowledge');
      expect((await store.getIncident(ids.outage))?.acknowledgedAt).toBeNull();
      expect((await post('01a2aaaa-0000-7000-8000-000000000000')).status()).toBe(404);
    });

    it('serves the page when the open incidents cannot be read, and the banner says so', async () => {
      // A real failure of the serve's read: the table is away for a moment.
      const db = new Database(join(server.dataDir, SQLITE_FILE));
      try {
        db.exec('ALTER TABLE incidents RENAME TO incidents_away');
        const res = await page.goto(`${server.url}/ui/sinks`);
        expect(res?.status()).toBe(200);
        expect(await page.locator('h1').textContent()).toBe('Sinks');
        expect(await page.getByRole('region', BANNER).textContent()).toContain('Open incidents could not be read');
      } finally {
        db.exec('ALTER TABLE incidents_away RENAME TO incidents');
        db.close();
      }
      await page.goto(`${server.url}/ui/sinks`);
      expect(await page.getByRole('region', BANNER).textContent()).toContain('2 open incidents');
    });
  });

  describe('at phone width', () => {
    let context: BrowserContext;
    let page: Page;
    beforeAll(async () => {
      context = await newContext(browser, PHONE);
      page = await context.newPage();
      await signIn(page, server.url);
    }, 120_000);
    afterAll(() => context?.close(), 60_000);

    for (const [name, path] of [
      ['banner', '/ui'],
      ['incidents', '/ui/incidents'],
    ] as const) {
      it(`${name}: accessible, no wider than the screen, a screenshot`, async () => {
        await page.goto(`${server.url}${path}`);
        expect(await page.getByRole('region', BANNER).count()).toBe(1);
        expect(await seriousViolations(page)).toEqual([]);
        await page.screenshot({ path: join(SHOTS, `${name}-phone.png`) });
        await page.screenshot({ path: join(FULL, `${name}-phone-full.png`), fullPage: true });
        await fits(page, PHONE.width);
      });
    }
  });
});
