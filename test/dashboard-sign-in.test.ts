import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, newContext } from './helpers/browser.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * Signing in to the dashboard with the admin token as serve prints it (docs/reference.md#dashboard): a serve that
 * generated its token prints `Authorization: Bearer cha_…`, and the form takes that line as it is, the token after
 * `Bearer ` in any case, or the token alone; anything else is still a wrong token, answered 401 and counted by the
 * auth limiter.
 */

let server: TestServer;
let printed: string;
let token: string;

beforeAll(async () => {
  // No CALLHOOK_ADMIN_TOKEN: serve generates the token and prints the line an operator copies.
  server = await startServer({ env: { CALLHOOK_ADMIN_TOKEN: '' }, config: { auth_limit: { max: 4, window: '1m' } } });
  printed = server.printed.find((line) => line.includes('Authorization: Bearer '))!;
  expect(printed).toMatch(/^ +Authorization: Bearer cha_\S+$/);
  token = printed.split('Bearer ')[1]!;
});
afterAll(() => server?.close());

async function signIn(pasted: string): Promise<Response> {
  return fetch(`${server.url}/ui/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
    body: new URLSearchParams({ token: pasted }).toString(),
  });
}

describe('signing in with the token as serve prints it', () => {
  it('takes the printed line, Bearer in any case, or the bare token, with spaces and a line end trimmed', async () => {
    for (const pasted of [
      `${printed}\n`,
      printed.trim(),
      `Bearer ${token}`,
      `bearer ${token}`,
      `BEARER ${token}\r\n`,
      token,
      `  ${token}\n`,
    ]) {
      const res = await signIn(pasted);
      expect(res.status, JSON.stringify(pasted)).toBe(303);
      expect(res.headers.get('location')).toBe('/ui');
      expect(res.headers.get('set-cookie')).toMatch(/^callhook_session=/);
    }
  });

  it('still refuses a wrong token, however it is written, with the form and a 401, counted by the limiter', async () => {
    for (const wrong of [`Authorization: Bearer ${token}x`, `Basic ${token}`, `Bearer: ${token}`]) {
      const res = await signIn(wrong);
      expect(res.status, wrong).toBe(401);
      expect(await res.text()).toContain('That is not the admin token.');
    }
    // The fourth failure from this address within the window: the limiter now answers for it.
    expect((await signIn('Bearer wrong')).status).toBe(401);
    expect((await signIn(printed)).status).toBe(303);
    const limited = await signIn('Bearer still-wrong');
    expect(limited.status).toBe(429);
  });

  it('in Chromium: the whole line as printed, pasted in the field, lands on the overview', async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await (await newContext(browser)).newPage();
      await page.goto(`${server.url}/ui/login`);
      await page.getByLabel('Admin token').fill(printed);
      await Promise.all([
        page.waitForURL(`${server.url}/ui`),
        page.getByRole('button', { name: 'Sign in with the token' }).click(),
      ]);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    } finally {
      await browser?.close();
    }
  }, 180_000);
});
