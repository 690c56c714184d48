import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchChromium, newContext, PHONE, seriousViolations, signIn } from './helpers/browser.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { adminApi, KEY, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/**
 * Every page of the dashboard (docs/reference.md#dashboard) at desktop and phone width: no serious or critical
 * accessibility violation (axe), one `<h1>`, and a screenshot of what the operator sees. The screenshots go to a
 * folder of the temp dir, so a test run leaves the checkout as it was; `SCREENSHOTS=docs/screenshots` writes the
 * ones docs/dashboard.md shows, when a page has changed.
 */

const SHOTS = process.env.SCREENSHOTS ?? join(tmpdir(), 'callhook-screenshots');

let server: TestServer;
let crm: Receiver;
let browser: Browser;
let heldId: string;
let deadId: string;

const CALLS = [
  {
    first_name: 'Asha',
    last_name: 'Verma',
    call_outcome: 'order placed',
    sentiment_analysis: 'positive',
    call_summary: 'Ordered two electric kettles, delivery to Pune on Friday.',
  },
  {
    first_name: 'Rahul',
    last_name: 'Mehta',
    call_outcome: 'order placed',
    sentiment_analysis: 'positive',
    call_summary: 'Repeat order of the 5 kg rice pack.',
  },
  {
    first_name: 'Priya',
    last_name: 'Nair',
    call_outcome: 'callback requested',
    sentiment_analysis: 'neutral',
    call_summary: 'Busy at work, asked to be called after 6 pm.',
  },
  {
    first_name: 'Imran',
    last_name: 'Khan',
    call_outcome: 'not interested',
    sentiment_analysis: 'negative',
    call_summary: 'Said he already bought a kettle elsewhere.',
  },
  {
    first_name: 'Lakshmi',
    last_name: 'Iyer',
    call_outcome: 'order placed',
    sentiment_analysis: 'positive',
    call_summary: 'Ordered a mixer grinder and asked about the warranty.',
  },
  {
    first_name: 'Vikram',
    last_name: 'Singh',
    call_outcome: 'refund requested',
    sentiment_analysis: 'negative',
    call_summary: 'The toaster arrived broken; wants a refund.',
  },
  {
    first_name: 'Neha',
    last_name: 'Joshi',
    call_outcome: 'callback requested',
    sentiment_analysis: 'neutral',
    call_summary: 'Wants to compare prices first.',
  },
];

const PAGES: [name: string, path: () => string][] = [
  ['overview', () => '/ui'],
  ['calls', () => '/ui/calls'],
  ['call', () => `/ui/calls/${deadId}`],
  ['review', () => '/ui/review'],
  ['edit', () => `/ui/calls/${heldId}/edit`],
  ['deliveries', () => '/ui/deliveries'],
  ['sinks', () => '/ui/sinks'],
  ['refused', () => '/ui/refused'],
];

describe('dashboard pages', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    crm = await startReceiver((req, res) =>
      req.body.includes('Vikram')
        ? res.writeHead(422).end('{"error":"phone already belongs to another contact"}')
        : res.writeHead(200).end('ok'),
    );
    server = await startServer({
      config: {
        timezone: 'Asia/Kolkata',
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'crm', type: 'http', url: `${crm.url}/calls`, retry: { attempts: 1 } },
          { name: 'audit', type: 'log', paused: true },
        ],
      },
    });
    for (const call of CALLS) expect((await post(server.url, sampleCall(call))).status).toBe(200);
    const held = await post(
      server.url,
      sampleCall({
        first_name: 'Sunita',
        last_name: 'Rao',
        call_duration: undefined,
        phone_number: '98123',
        call_outcome: 'order placed',
        call_summary: 'Ordered a pressure cooker; the line dropped before the address.',
      }),
    );
    heldId = ((await held.json()) as { id: string }).id;
    await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"first_name": "Arjun", "call_outcome": "order placed", ',
    });
    await until(async () => (await adminApi(server, '/deliveries?state=dead')).body.deliveries.length === 1, {
      timeoutMs: 60_000,
      everyMs: 100,
    });
    deadId = (await adminApi(server, '/deliveries?state=dead')).body.deliveries[0].callId;
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await crm?.close();
  }, 60_000);

  for (const [size, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    describe(`at ${size} width`, () => {
      let context: BrowserContext;
      let page: Page;
      beforeAll(async () => {
        context = await newContext(browser, viewport);
        page = await context.newPage();
      }, 120_000);
      afterAll(() => context?.close(), 60_000);

      it('sign-in page: accessible', async () => {
        await page.goto(`${server.url}/ui/login`);
        expect(await seriousViolations(page)).toEqual([]);
        if (size === 'phone') await page.screenshot({ path: join(SHOTS, `login-${size}.png`) });
        await signIn(page, server.url);
      });

      for (const [name, path] of PAGES) {
        it(`${name}: one h1, no serious accessibility violation, a screenshot`, async () => {
          const res = await page.goto(`${server.url}${path()}`);
          expect(res?.status()).toBe(200);
          expect(await page.locator('h1').count()).toBe(1);
          expect(await seriousViolations(page)).toEqual([]);
          await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`) });
        });
      }

      it('the confirmation of a bulk retry, the held call and a missing page: accessible', async () => {
        for (const path of ['/ui/deliveries/retry?state=dead', `/ui/calls/${heldId}`, '/ui/no-such-page']) {
          await page.goto(`${server.url}${path}`);
          expect(await page.locator('h1').count(), path).toBe(1);
          expect(await seriousViolations(page), path).toEqual([]);
        }
      });

      it('a form another page sends: refused on a page that says what to check behind a proxy, accessible', async () => {
        // A page of no site (about:blank) posts to the dashboard: the browser says `Origin: null`.
        const action = `${server.url}/ui/sinks/audit/resume`;
        await page.goto('about:blank');
        await page.setContent(`<form method="post" action="${action}"><button>Send</button></form>`);
        const [res] = await Promise.all([page.waitForResponse(action), page.getByRole('button').click()]);
        expect(res.status()).toBe(403);
        await expect.poll(() => page.locator('h1').textContent()).toBe('This form was sent from another site');
        expect(await page.getByText('proxy_set_header Host $http_host;').count()).toBe(1);
        expect(await seriousViolations(page)).toEqual([]);
        const { sinks } = (await adminApi(server, '/sinks')).body as { sinks: { name: string; paused: boolean }[] };
        expect(sinks.find((s) => s.name === 'audit')?.paused).toBe(true);
      });
    });
  }
});
