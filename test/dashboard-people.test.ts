import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchChromium, newContext, PHONE, seriousViolations, signIn } from './helpers/browser.js';
import { post, sampleCall, startServer, type TestServer } from './helpers/server.js';

/**
 * People on the dashboard in Chromium (docs/dashboard.md): the admin token adds a viewer, an operator and an admin on
 * /ui/users; each sets a password through their one-time link and signs in with it; every page each role may open is
 * accessible (axe) with one `<h1>`, and the ones it may not are a 403 page, accessible too. Screenshots of the sign-in,
 * the link's page, the users, the audit log and a viewer's overview at desktop and phone width go where the other
 * dashboard tests put theirs (`SCREENSHOTS=docs/screenshots` writes the ones docs/dashboard.md shows).
 */

const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'callhook-screenshots');
const PASSWORD = 'kettle rice mixer toaster';
const SIZES = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

const PEOPLE = [
  ['viewer', 'meera.iyer@example.com'],
  ['operator', 'arjun.rao@example.com'],
  ['admin', 'priya.nair@example.com'],
] as const;

/** Every page of the dashboard, by the role it needs. */
const PAGES: [path: string, role: 'viewer' | 'operator' | 'admin'][] = [
  ['/ui', 'viewer'],
  ['/ui/calls', 'viewer'],
  ['/ui/review', 'viewer'],
  ['/ui/deliveries', 'viewer'],
  ['/ui/sinks', 'viewer'],
  ['/ui/refused', 'viewer'],
  ['/ui/incidents', 'viewer'],
  ['/ui/deliveries/retry?state=pending', 'operator'],
  ['/ui/users', 'admin'],
  ['/ui/audit', 'admin'],
];
const RANK = { viewer: 0, operator: 1, admin: 2 } as const;

let server: TestServer;
let browser: Browser;
let callId: string;
const links = new Map<string, string>();

/** Every accessibility violation axe finds, whatever its impact: the new pages have none. */
async function violations(page: Page): Promise<string[]> {
  const { violations: found } = await new AxeBuilder({ page }).analyze();
  return found.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join('; ')})`);
}

async function signInAs(page: Page, email: string): Promise<void> {
  await page.goto(`${server.url}/ui/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await Promise.all([
    page.waitForURL(`${server.url}/ui`),
    page.getByRole('button', { name: 'Sign in', exact: true }).click(),
  ]);
}

describe('the dashboard for each role', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startServer({
      config: {
        timezone: 'Asia/Kolkata',
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'audit', type: 'log', paused: true },
        ],
      },
    });
    for (const first_name of ['Asha', 'Rahul', 'Neha']) {
      const res = await post(server.url, sampleCall({ first_name }));
      // The overview screenshot shows these three as accepted, and nothing refused or not stored.
      expect(res.status).toBe(200);
      callId = ((await res.json()) as { id: string }).id;
    }
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  }, 60_000);

  it('the admin token adds a viewer, an operator and an admin, and sees each one-time link once', async () => {
    const page = await (await newContext(browser)).newPage();
    await signIn(page, server.url);
    await page.goto(`${server.url}/ui/users`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Users');
    for (const [role, email] of PEOPLE) {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Role', { exact: true }).selectOption(role);
      await Promise.all([
        page.waitForURL(`${server.url}/ui/users`),
        page.getByRole('button', { name: 'Add user' }).click(),
      ]);
      const link = await page.getByLabel('One-time link').inputValue();
      expect(link).toMatch(/\/ui\/password\/[A-Za-z0-9_-]{43}$/);
      links.set(email, link);
      expect(await violations(page), role).toEqual([]);
    }
    await page.context().close();
  });

  it('each sets a password through the link, which the page screenshots at both widths', async () => {
    for (const [size, viewport] of SIZES) {
      const page = await (await newContext(browser, viewport)).newPage();
      await page.goto(links.get(PEOPLE[0][1])!);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Set your password');
      expect(await violations(page)).toEqual([]);
      await page.screenshot({ path: join(SHOTS, `password-${size}.png`) });
      await page.context().close();
    }
    for (const [, email] of PEOPLE) {
      const page = await (await newContext(browser)).newPage();
      await page.goto(links.get(email)!);
      await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('New password, again').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(/\/ui\/login\?password=set$/),
        page.getByRole('button', { name: 'Set password' }).click(),
      ]);
      expect(await page.getByRole('status').textContent()).toBe('Your password is set: sign in with it.');
      // The link again: used.
      const again = await page.goto(links.get(email)!);
      expect(again?.status()).toBe(410);
      expect(await violations(page)).toEqual([]);
      await page.context().close();
    }
  });

  it('the sign-in page: accessible, screenshots at both widths', async () => {
    for (const [size, viewport] of SIZES) {
      const page = await (await newContext(browser, viewport)).newPage();
      await page.goto(`${server.url}/ui/login`);
      expect(await violations(page)).toEqual([]);
      await page.screenshot({ path: join(SHOTS, `login-${size}.png`) });
      await page.context().close();
    }
  });

  for (const [role, email] of PEOPLE) {
    it(`${role}: every page it may open is accessible, the others a 403 page saying the role`, async () => {
      const page = await (await newContext(browser)).newPage();
      await signInAs(page, email);
      expect(await page.locator('header.top').textContent()).toContain(`${email} (${role})`);
      let refusalChecked = false;
      for (const [path, needs] of [
        ...PAGES,
        [`/ui/calls/${callId}`, 'viewer'] as const,
        [`/ui/calls/${callId}/edit`, 'operator'] as const,
      ]) {
        const res = await page.goto(`${server.url}${path}`);
        const allowed = RANK[role] >= RANK[needs];
        expect(res?.status(), `${path} as ${role}`).toBe(allowed ? 200 : 403);
        expect(await page.locator('h1').count(), path).toBe(1);
        if (!allowed) expect(await page.locator('h1').textContent()).toBe('Not allowed');
        if (!allowed) expect(await page.getByRole('alert').textContent()).toContain(`needs the ${needs} role`);
        // The 403 page is one page whatever was asked: axe reads it once a role, and every page the role may open.
        if (allowed || !refusalChecked) expect(await seriousViolations(page), `${path} as ${role}`).toEqual([]);
        refusalChecked ||= !allowed;
      }
      // The menu offers only what the role may open.
      const menu = await page.getByRole('navigation', { name: 'Main' }).textContent();
      expect(menu?.includes('Users')).toBe(role === 'admin');
      expect(menu?.includes('Audit')).toBe(role === 'admin');
      await page.context().close();
    });
  }

  it("screenshots a viewer's overview, the users and the audit log at both widths, with nothing to fix", async () => {
    for (const [size, viewport] of SIZES) {
      const viewer = await (await newContext(browser, viewport)).newPage();
      await signInAs(viewer, PEOPLE[0][1]);
      await viewer.screenshot({ path: join(SHOTS, `overview-viewer-${size}.png`), fullPage: true });
      await viewer.context().close();

      const admin = await (await newContext(browser, viewport)).newPage();
      await signInAs(admin, PEOPLE[2][1]);
      for (const name of ['users', 'audit']) {
        await admin.goto(`${server.url}/ui/${name}`);
        expect(await violations(admin), name).toEqual([]);
        const { scrollWidth } = await admin.evaluate(() => ({
          scrollWidth: (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
        }));
        expect(scrollWidth, `${name} at ${size}`).toBeLessThanOrEqual(viewport.width);
        await admin.screenshot({ path: join(SHOTS, `${name}-${size}.png`), fullPage: true });
      }
      await admin.context().close();
    }
  });
});
