import { existsSync } from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ADMIN } from './server.js';

/**
 * Debian's Chromium, driven by playwright-core (which downloads no browser of its own). `.ci/run` installs it with
 * apt-get; a machine without it fails these tests, as a missing service does, rather than skipping them.
 */
export const CHROMIUM = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`the dashboard's tests need Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
    // A loaded 2-core machine starts a browser slowly.
    timeout: 120_000,
  });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** A browser context at this size with waits that allow for a loaded machine. */
export async function newContext(browser: Browser, viewport = DESKTOP): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  context.setDefaultTimeout(30_000);
  context.setDefaultNavigationTimeout(60_000);
  return context;
}

/** Signs in through the form, as an operator does, and waits for the overview. */
export async function signIn(page: Page, url: string, token = ADMIN): Promise<void> {
  await page.goto(`${url}/ui/login`);
  await page.getByLabel('Admin token').fill(token);
  await Promise.all([page.waitForURL(`${url}/ui`), page.getByRole('button', { name: 'Sign in' }).click()]);
}

/** The serious and critical accessibility violations axe finds on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join('; ')})`,
    );
}
