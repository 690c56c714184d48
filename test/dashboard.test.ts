import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeService } from './fakes/calling-service.js';
import { launchChromium, newContext, signIn } from './helpers/browser.js';
import { runCallhook } from './helpers/cli.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import {
  ADMIN,
  adminApi,
  closedPort,
  jsonlRecords,
  KEY,
  post,
  sampleCall,
  startServer,
  type TestServer,
  until,
} from './helpers/server.js';

/**
 * The dashboard end to end (docs/reference.md#dashboard, issue 23): a real serve with a jsonl sink and an http sink
 * that fails until told otherwise, calls posted over HTTP, and an operator's browser (Debian's Chromium) doing what an
 * operator does. The steps run in order on one signed-in page.
 */

const CRM_SECRET = 'crm-secret-token-5f2a9c7e11';
const URL_SECRET = 'url-secret-pass-8d1e0b4a';
const XSS_NAME = '<script>window.__xss = 1</script>';
const LONG_WAIT = { timeoutMs: 60_000, everyMs: 100 };

let server: TestServer;
let crm: Receiver;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** The HTML of every page the operator saw, checked at the end for secrets. */
const seen = new Map<string, string>();
const look = async () => seen.set(page.url(), await page.content());

describe('dashboard', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    crm = await startReceiver((_req, res) => res.writeHead(500).end('crm is down'));
    server = await startServer({
      config: {
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [
          { name: 'jsonl', type: 'jsonl' },
          {
            name: 'crm',
            type: 'http',
            url: `${crm.url}/calls`,
            headers: { Authorization: `Bearer ${CRM_SECRET}` },
            retry: { attempts: 1 },
            timeout: '5s',
          },
        ],
      },
    });
    expect(
      (await post(server.url, sampleCall({ first_name: XSS_NAME, call_summary: 'Ordered two kettles.' }))).status,
    ).toBe(200);
    expect(
      (
        await post(
          server.url,
          sampleCall({
            first_name: 'Meera',
            call_summary: 'Asked for a refund on the toaster.',
            call_outcome: 'refund requested',
            sentiment_analysis: 'negative',
          }),
        )
      ).status,
    ).toBe(200);
    // No duration: a problem, and `on_problem: hold` keeps the call from the sinks until someone releases it.
    expect(
      (
        await post(
          server.url,
          sampleCall({
            first_name: 'Held',
            call_duration: undefined,
            email_address: 'held-at-example',
            call_summary: 'Wants a callback.',
          }),
        )
      ).status,
    ).toBe(200);
    // Refused after the key check: its body is kept for ingest.
    const refused = await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"first_name": "Ravi", ',
    });
    expect(refused.status).toBe(400);
    expect((await post(server.url, sampleCall(), { key: 'a-wrong-key-0123456789' })).status).toBe(401);
    // Both accepted calls reach crm once, and die there (one attempt).
    await until(
      async () => (await adminApi(server, '/deliveries?state=dead&sink=crm')).body.deliveries.length === 2,
      LONG_WAIT,
    );
    browser = await launchChromium();
    context = await newContext(browser);
    page = await context.newPage();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await crm?.close();
  }, 60_000);

  it('refuses a wrong token with 401 and the form again, and signs in with the right one', async () => {
    const first = await page.goto(`${server.url}/ui`);
    expect(page.url()).toBe(`${server.url}/ui/login`);
    expect(first?.status()).toBe(200);
    await page.getByLabel('Admin token').fill('not-the-token');
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/ui/login') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in with the token' }).click(),
    ]);
    expect(wrong.status()).toBe(401);
    expect(await page.getByRole('alert').textContent()).toBe('That is not the admin token.');
    expect(await page.getByLabel('Admin token').getAttribute('type')).toBe('password');
    await look();

    await signIn(page, server.url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    await look();
  });

  it('sets the session cookie with the documented flags, and never the token in it', async () => {
    const cookies = await context.cookies(`${server.url}/ui`);
    expect(cookies).toHaveLength(1);
    const [cookie] = cookies;
    expect(cookie).toMatchObject({
      name: 'callhook_session',
      path: '/ui',
      httpOnly: true,
      sameSite: 'Strict',
      secure: false,
    });
    expect(cookie!.value).not.toContain(ADMIN);
    // At most 12 hours (docs/reference.md#dashboard).
    expect(cookie!.expires * 1000).toBeLessThanOrEqual(Date.now() + 12 * 3600_000 + 60_000);
    expect(cookie!.expires * 1000).toBeGreaterThan(Date.now() + 11 * 3600_000);
  });

  it("counts the wrong-key request on the overview and shows a caller's <script> as text, never running it", async () => {
    await page.goto(`${server.url}/ui`);
    const wrongKeys = page.getByRole('row', { name: /Wrong key \(401\)/ });
    expect(await wrongKeys.getByRole('cell').textContent()).toBe('1');
    expect(await page.locator('#last-reconcile').textContent()).toBe('never run');
    await page.goto(`${server.url}/ui/calls`);
    await page.getByText(`${XSS_NAME} Verma`).waitFor();
    expect(await page.evaluate('typeof window.__xss')).toBe('undefined');
    await look();
  });

  it('finds a call by a word of its summary, and shows its delivery attempts', async () => {
    await page.goto(`${server.url}/ui/calls`);
    await page.getByLabel('Search text').fill('toaster');
    await Promise.all([page.waitForURL(/q=toaster/), page.getByRole('button', { name: 'Filter' }).click()]);
    const rows = page.getByRole('region', { name: 'Calls, newest first' }).locator('tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Meera');
    await look();
    await Promise.all([page.waitForURL(/\/ui\/calls\/[\w-]+$/), rows.first().getByRole('link').click()]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Call from Meera Verma');
    const attempts = page.getByRole('region', { name: 'Attempts of the delivery to crm' });
    expect(await attempts.locator('tbody tr').count()).toBe(1);
    expect(await attempts.locator('tbody tr').textContent()).toContain('500');
    // The attempt's duration in whole milliseconds, not the float the clock measured.
    expect(await attempts.locator('tbody td[data-label="ms"]').textContent()).toMatch(/^\d+$/);
    await look();
  });

  it('calls a sink failing while its last error is newer than its last success', async () => {
    const crmNow = (await adminApi(server, '/sinks')).body.sinks.find((s: { name: string }) => s.name === 'crm');
    expect(crmNow).toMatchObject({ state: 'failing', failing: true, last_success_at: null });
    expect(crmNow.last_error).toMatch(/500/);
    await page.goto(`${server.url}/ui/sinks`);
    const row = page.getByRole('row', { name: /^crm/ });
    expect(await row.getByText('last attempt failed').count()).toBe(1);
    await look();
  });

  it('retries the dead deliveries after a page that states how many', async () => {
    crm.respond((_req, res) => res.writeHead(200).end('ok'));
    await page.goto(`${server.url}/ui/deliveries?state=dead`);
    await Promise.all([
      page.waitForURL(/\/ui\/deliveries\/retry/),
      page.getByRole('link', { name: /Retry all dead deliveries/ }).click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Retry deliveries');
    expect(await page.locator('main').textContent()).toContain('This retries 2 dead deliveries');
    await look();
    await Promise.all([
      page.waitForURL(/retried=2/),
      page.getByRole('button', { name: 'Retry 2 dead deliveries' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toBe('Retried 2 deliveries.');
    await until(
      async () => (await adminApi(server, '/deliveries?state=done&sink=crm')).body.deliveries.length === 2,
      LONG_WAIT,
    );
  });

  it('keeps a failure older than the last success as history: the reply and the pages no longer call the sink failing', async () => {
    const crmNow = (await adminApi(server, '/sinks')).body.sinks.find((s: { name: string }) => s.name === 'crm');
    expect(crmNow).toMatchObject({ state: 'running', failing: false });
    expect(crmNow.last_error).toMatch(/500/);
    expect(Date.parse(crmNow.last_success_at)).toBeGreaterThan(Date.parse(crmNow.last_error_at));
    for (const path of ['/ui/sinks', '/ui']) {
      await page.goto(`${server.url}${path}`);
      const row = page.getByRole('row', { name: /^crm/ });
      expect(await row.getByText('last attempt failed').count(), path).toBe(0);
      expect(await row.getByText(/^last failed .+ ago, delivering since$/).count(), path).toBe(1);
    }
    await page.goto(`${server.url}/ui/sinks`);
    const row = page.getByRole('row', { name: /^crm/ });
    expect(await row.getByRole('cell').filter({ hasText: 'before the last success' }).count()).toBe(1);
    await look();
  });

  it('pauses and resumes a sink', async () => {
    await page.goto(`${server.url}/ui/sinks`);
    await Promise.all([page.waitForURL(/done=paused/), page.getByRole('button', { name: 'Pause crm' }).click()]);
    expect(await page.getByRole('status').textContent()).toBe('Paused crm.');
    expect((await adminApi(server, '/sinks')).body.sinks.find((s: { name: string }) => s.name === 'crm')).toMatchObject(
      { paused: true, paused_by: 'operator' },
    );
    await look();
    await Promise.all([page.waitForURL(/done=resumed/), page.getByRole('button', { name: 'Resume crm' }).click()]);
    expect((await adminApi(server, '/sinks')).body.sinks.find((s: { name: string }) => s.name === 'crm')).toMatchObject(
      { paused: false },
    );
  });

  it("corrects a held call's missing and invalid fields, saves and releases it, and the corrected record reaches the jsonl sink", async () => {
    await page.goto(`${server.url}/ui/review`);
    await Promise.all([
      page.waitForURL(/\/ui\/calls\/[\w-]+$/),
      page
        .getByRole('row', { name: /Held Verma/ })
        .getByRole('link')
        .click(),
    ]);
    const id = page.url().split('/').at(-1)!;
    expect(await page.getByRole('row', { name: /^call_duration/ }).textContent()).toContain('missing_required');
    expect(await page.getByRole('row', { name: /^email_address/ }).textContent()).toContain('invalid_format');
    await look();
    await Promise.all([page.waitForURL(/\/edit$/), page.getByRole('link', { name: 'Edit fields' }).click()]);
    // Prefilled with the value as received where the field has a problem.
    expect(await page.getByLabel(/^email_address/).inputValue()).toBe('held-at-example');
    expect(await page.getByLabel(/^call_duration/).inputValue()).toBe('');
    await look();
    await page.getByLabel(/^call_duration/).fill('184');
    await page.getByLabel(/^email_address/).fill('held@example.com');
    await Promise.all([
      page.waitForURL(/done=edited-released/),
      page.getByRole('button', { name: 'Save and release' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toBe('Saved 2 fields; released to 2 sinks.');
    expect(await page.getByRole('region', { name: 'Edits' }).textContent()).toContain('held-at-example');
    await look();
    const record = await until(() => jsonlRecords(server.dataDir).find((r) => r.id === id), LONG_WAIT);
    expect(record).toMatchObject({
      revision: 2,
      problems: [],
      data: { email_address: 'held@example.com', call_duration: 184 },
    });
  });

  it('ingests a refused request with a corrected body', async () => {
    await page.goto(`${server.url}/ui/refused`);
    const form = page.getByRole('region', { name: /Request \d+ to end-of-call/ }).first();
    expect(await page.getByLabel(/^Body/).first().inputValue()).toBe('{"first_name": "Ravi", ');
    await look();
    await page
      .getByLabel(/^Body/)
      .first()
      .fill(JSON.stringify(sampleCall({ first_name: 'Ravi', call_summary: 'Recovered by hand.' })));
    await Promise.all([
      page.waitForURL(/done=ingested/),
      page
        .getByRole('button', { name: /Ingest request/ })
        .first()
        .click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Call from Ravi Verma');
    const id = page.url().split('/').at(-1)!.split('?')[0]!;
    expect((await adminApi(server, `/calls/${id}`)).body.record).toMatchObject({
      source: 'recovered',
      data: { first_name: 'Ravi' },
    });
    void form;
  });

  it('shows the last reconcile run, a failed one with its error masked, then one that stored a lost call', async () => {
    const service = await startFakeService({
      state: {
        campaigns: [
          { id: 'c1', campaigns_name: 'Diwali offers', started_at: '2026-11-20T09:00:00.000Z', is_started: true },
        ],
        audiences: {
          c1: [
            // Lost: stored, held (the service knows no outcome or summary, and the hook holds calls with problems).
            {
              first_name: 'Meera',
              last_name: 'Iyer',
              phone: '09811122233',
              status: 'completed',
              call_duration_in_sec: '95',
              recording_url: 'https://rec.example/r3.mp3',
            },
            {
              first_name: 'Nobody',
              last_name: 'Home',
              phone: '9800000001',
              status: 'no-answer',
              call_duration_in_sec: '0',
              recording_url: '',
            },
          ],
        },
      },
    });
    const env = {
      CALLHOOK_DATA_DIR: server.dataDir,
      CALLHOOK_CONFIG: join(server.dataDir, 'config.json'),
      CALLHOOK_API_KEYS: KEY,
      CALLHOOK_ADMIN_TOKEN: ADMIN,
    };
    const lastRun = page.locator('#last-reconcile');
    try {
      // The error names the service's URL, whose credentials are a secret: kept, and shown, masked.
      const unreachable = `http://operator:${URL_SECRET}@127.0.0.1:${await closedPort()}/api/v1`;
      expect(
        (await runCallhook(['reconcile', '--api-url', unreachable, '--api-key', service.apiKey], env)).code,
      ).not.toBe(0);
      await page.goto(`${server.url}/ui`);
      expect(await lastRun.getByText('failed').count()).toBe(1);
      expect(await lastRun.textContent()).toContain('1 error');
      expect(await lastRun.textContent()).toContain('127.0.0.1');
      expect(await lastRun.textContent()).not.toContain(URL_SECRET);
      await look();

      const { code, stdout } = await runCallhook(
        ['reconcile', '--api-url', service.baseUrl, '--api-key', service.apiKey, '--since', '2026-11-01', '--json'],
        env,
      );
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ calls: 1, matched: 0, recovered: [{ name: 'Meera Iyer' }] });
      await page.goto(`${server.url}/ui`);
      const text = (await lastRun.textContent())!;
      expect(await lastRun.getByText('finished').count()).toBe(1);
      expect(text).toContain(
        '1 stored, 0 already received, of 1 call found in 1 campaign; 0 errors (campaigns since 2026-11-01); callhook reconcile',
      );
      expect(text).not.toContain('dry run');
      expect(await lastRun.locator('time').count()).toBe(1);
      await look();
    } finally {
      await service.close();
    }
  });

  it('refuses a POST from another origin, or from a null one, with 403', async () => {
    const [cookie] = await context.cookies(`${server.url}/ui`);
    for (const origin of ['https://evil.example', 'null', `${server.url.replace('127.0.0.1', 'localhost')}`]) {
      const res = await fetch(`${server.url}/ui/sinks/crm/pause`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin, cookie: `${cookie!.name}=${cookie!.value}` },
      });
      expect(res.status, origin).toBe(403);
    }
    expect((await adminApi(server, '/sinks')).body.sinks.find((s: { name: string }) => s.name === 'crm').paused).toBe(
      false,
    );
  });

  it('shows no admin token, webhook key or configured secret on any page', () => {
    expect(seen.size).toBeGreaterThanOrEqual(8);
    for (const [url, html] of seen) {
      for (const secret of [ADMIN, KEY, CRM_SECRET, URL_SECRET])
        expect(html.includes(secret), `${url} shows ${secret}`).toBe(false);
    }
  });

  it('signs out: the overview then asks to sign in, and the old cookie opens nothing', async () => {
    const [cookie] = await context.cookies(`${server.url}/ui`);
    await page.goto(`${server.url}/ui`);
    await Promise.all([
      page.waitForURL(`${server.url}/ui/login`),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(await context.cookies(`${server.url}/ui`)).toHaveLength(0);
    await page.goto(`${server.url}/ui`);
    expect(page.url()).toBe(`${server.url}/ui/login`);
    const replayed = await fetch(`${server.url}/ui`, {
      redirect: 'manual',
      headers: { cookie: `${cookie!.name}=${cookie!.value}` },
    });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/ui/login');
  });
});
