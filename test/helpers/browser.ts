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
  await Promise.all([
    page.waitForURL(`${url}/ui`),
    page.getByRole('button', { name: 'Sign in with the token' }).click(),
  ]);
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

/** The little of the DOM `overflow` reads in the page (the tests compile without the DOM's types). */
type ComputedStyle = (el: PageElement) => { overflow: string };
interface PageElement {
  tagName: string;
  id: string;
  classList: Iterable<string>;
  getAttribute(name: string): string | null;
  parentElement: PageElement | null;
  getBoundingClientRect(): { right: number; width: number; height: number };
}
interface PageDocument {
  documentElement: { scrollWidth: number };
  body: { querySelectorAll(selector: string): Iterable<PageElement> };
}

/**
 * How wide the page is (`document.documentElement.scrollWidth`), and the elements whose right edge passes `width`,
 * inside a sideways-scrolling box or not, so a failure names what is too wide. What is visually hidden (a 1 px box
 * that hides its overflow: style.ts's `.visually-hidden`, a card table's header row on a phone) is not seen.
 */
export async function overflow(page: Page, width: number): Promise<{ scrollWidth: number; past: string[] }> {
  return page.evaluate((edge) => {
    const { document: doc, getComputedStyle: style } = globalThis as unknown as {
      document: PageDocument;
      getComputedStyle: ComputedStyle;
    };
    const hidden = (el: PageElement) => {
      for (let at: PageElement | null = el; at; at = at.parentElement) {
        const box = at.getBoundingClientRect();
        if (box.width <= 1 && box.height <= 1 && style(at).overflow === 'hidden') return true;
      }
      return false;
    };
    const name = (el: PageElement) => {
      const label = el.getAttribute('data-label');
      const classes = [...el.classList].map((c) => `.${c}`).join('');
      return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${classes}${label ? `[data-label="${label}"]` : ''}`;
    };
    const past = [...doc.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > edge + 0.5 && !hidden(el))
      .map((el) => `${name(el)} (right edge ${Math.round(el.getBoundingClientRect().right)})`);
    return { scrollWidth: doc.documentElement.scrollWidth, past: [...new Set(past)].slice(0, 12) };
  }, width);
}
