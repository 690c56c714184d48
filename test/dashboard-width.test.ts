import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, launchChromium, newContext, overflow, PHONE, signIn } from './helpers/browser.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { adminApi, KEY, post, sampleCall, startServer, type TestServer, until } from './helpers/server.js';

/**
 * No dashboard page is wider than a phone's screen (docs/reference.md#dashboard), whatever the calls hold: a name
 * that is a URL, a pasted token or markup, a summary, a dedup key, a recording URL, an extra field, a sink's error and
 * a refused request's body, each one long unbroken string. Every page at 390 px and at desktop width: the document no
 * wider than the window, and on the calls page every summary whole on the screen. Screenshots go to the system's temp
 * directory, not docs/screenshots, which show ordinary calls.
 */

const SHOTS = join(tmpdir(), 'callhook-dashboard-width');

const URL_NAME = `https://crm.example.com/contacts/${'9f8e7d6c5b4a3210'.repeat(12)}?utm_source=${'voice'.repeat(20)}`;
const TOKEN = `eyJhbGciOiJIUzI1NiJ9.${'QWxhZGRpbjpvcGVuIHNlc2FtZQ'.repeat(10)}`;
const MARKUP = `<script>${'alert(document.cookie);'.repeat(12)}</script>`;

let server: TestServer;
let crm: Receiver;
let browser: Browser;
let longId: string;
let heldId: string;

describe('dashboard pages with long unbroken strings', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    crm = await startReceiver((_req, res) =>
      res.writeHead(422).end(`{"error":"contact_conflict","detail":"${TOKEN}${TOKEN}"}`),
    );
    server = await startServer({
      config: {
        timezone: 'Asia/Kolkata',
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          { name: 'crm', type: 'http', url: `${crm.url}/calls`, retry: { attempts: 1 } },
        ],
      },
    });
    const calls = [
      sampleCall({
        call_id: `call-${'k'.repeat(220)}`,
        first_name: URL_NAME,
        last_name: TOKEN,
        call_outcome: TOKEN,
        call_summary: `Asked us to open ${URL_NAME} and paste ${TOKEN}`,
        recording_url: URL_NAME,
        [`crm_reference_${'x'.repeat(60)}`]: TOKEN,
      }),
      sampleCall({ first_name: MARKUP, call_summary: MARKUP }),
      sampleCall({ first_name: 'Asha', last_name: 'Verma', call_summary: 'Ordered two electric kettles.' }),
    ];
    const ids: string[] = [];
    for (const call of calls) {
      const reply = await post(server.url, call);
      expect(reply.status).toBe(200);
      ids.push(((await reply.json()) as { id: string }).id);
    }
    longId = ids[0]!;
    const held = await post(
      server.url,
      sampleCall({ first_name: TOKEN, phone_number: '98123'.repeat(40), call_summary: TOKEN }),
    );
    heldId = ((await held.json()) as { id: string }).id;
    await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: `{"first_name": "${TOKEN}${URL_NAME}", `,
    });
    await until(async () => (await adminApi(server, '/deliveries?state=dead')).body.deliveries.length === 3, {
      timeoutMs: 60_000,
      everyMs: 100,
    });
    browser = await launchChromium();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await crm?.close();
  }, 60_000);

  const PAGES: [name: string, path: () => string][] = [
    ['overview', () => '/ui'],
    ['calls', () => '/ui/calls'],
    ['call', () => `/ui/calls/${longId}`],
    ['held-call', () => `/ui/calls/${heldId}`],
    ['review', () => '/ui/review'],
    ['edit', () => `/ui/calls/${heldId}/edit`],
    ['deliveries', () => '/ui/deliveries'],
    ['retry', () => '/ui/deliveries/retry?state=dead'],
    ['refused', () => '/ui/refused'],
    ['sinks', () => '/ui/sinks'],
  ];

  for (const [size, viewport] of [
    ['phone', PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    describe(`at ${size} width (${viewport.width} px)`, () => {
      let context: BrowserContext;
      let page: Page;
      beforeAll(async () => {
        context = await newContext(browser, viewport);
        page = await context.newPage();
      }, 120_000);
      afterAll(() => context?.close(), 60_000);

      const fits = async (name: string) => {
        await page.screenshot({ path: join(SHOTS, `${name}-${size}.png`), fullPage: true });
        const { scrollWidth, past } = await overflow(page, viewport.width);
        expect({ scrollWidth, past }).toEqual({ scrollWidth: expect.any(Number), past: [] });
        expect(scrollWidth).toBeLessThanOrEqual(viewport.width);
      };

      it('sign-in page', async () => {
        await page.goto(`${server.url}/ui/login`);
        await fits('login');
        await signIn(page, server.url);
      });

      for (const [name, path] of PAGES) {
        it(`${name}: no wider than the window`, async () => {
          const res = await page.goto(`${server.url}${path()}`);
          expect(res?.status()).toBe(200);
          await fits(name);
        });
      }

      it("calls: every call's summary whole within the window", async () => {
        await page.goto(`${server.url}/ui/calls`);
        const cells = page.locator('td[data-label="Summary"]');
        expect(await cells.count()).toBe(4);
        for (const cell of await cells.all()) {
          const box = await cell.boundingBox();
          expect(box).not.toBeNull();
          expect(box!.x).toBeGreaterThanOrEqual(0);
          expect(box!.x + box!.width).toBeLessThanOrEqual(viewport.width);
        }
      });
    });
  }
});
