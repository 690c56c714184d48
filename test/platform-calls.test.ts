import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformOf } from '../src/platforms/index.js';
import { runCallhook } from './helpers/cli.js';
import { ADMIN, adminApi, post, sampleCall, startServer, type TestServer } from './helpers/server.js';

/**
 * The calls a voice platform sent, told from the calling service's (docs/reference.md#other-voice-platforms): the admin
 * API's `platform` filter, `callhook calls list --platform`, and the dashboard's calls list and call page.
 */

const SECRET = 'vapi-calls-secret-0d8f2b';
const vapi = platformOf('vapi')!;

let server: TestServer;
let fromVapi: string;
let fromService: string;

beforeAll(async () => {
  server = await startServer({ config: { hooks: { vapi: { platform: 'vapi', secret: SECRET } } } });
  const body = JSON.stringify({
    message: {
      type: 'end-of-call-report',
      startedAt: '2026-11-21T08:30:00.000Z',
      endedAt: '2026-11-21T08:32:00.000Z',
      customer: { number: '+919812345678' },
      call: { id: 'vapi-call-1' },
      analysis: { summary: 'Asked about the kettle.', structuredData: { first_name: 'Asha', last_name: 'Verma' } },
    },
  });
  const signed = vapi.sign(body, SECRET, vapi.options.parse({}), Date.now());
  const res = await fetch(`${server.url}/webhooks/vapi`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signed },
    body,
  });
  expect(res.status).toBe(200);
  fromVapi = ((await res.json()) as { id: string }).id;
  fromService = ((await (await post(server.url, sampleCall())).json()) as { id: string }).id;
});
afterAll(() => server?.close());

const listed = async (query: string) =>
  ((await adminApi(server, `/calls?${query}`)).body.calls as { record: { id: string } }[]).map((c) => c.record.id);

describe('the platform filter', () => {
  it('in the admin API: a platform, or none for the calling service; anything else is a 400', async () => {
    expect(await listed('platform=vapi')).toEqual([fromVapi]);
    expect(await listed('platform=none')).toEqual([fromService]);
    expect(await listed('platform=bland')).toEqual([]);
    expect(await listed('')).toEqual([fromVapi, fromService]);
    const bad = await adminApi(server, '/calls?platform=skype');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^Bad request: platform: /);
  });

  it('in callhook calls list', async () => {
    const env = { CALLHOOK_DATA_DIR: server.dataDir };
    const ids = async (...args: string[]) =>
      (await runCallhook(['calls', 'list', ...args], env)).stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]);
    expect(await ids('--platform', 'vapi')).toEqual([fromVapi]);
    expect(await ids('--platform', 'none')).toEqual([fromService]);
    const bad = await runCallhook(['calls', 'list', '--platform', 'skype'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--platform <name>' argument 'skype' is invalid. Allowed choices are none, vapi, /);
  });

  it("in the dashboard's calls list, and the call's page says who sent it", async () => {
    const login = await fetch(`${server.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = async (path: string) => {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      return res.text();
    };
    const link = (id: string) => `/ui/calls/${id}`;

    const vapiOnly = await page('/ui/calls?platform=vapi');
    expect(vapiOnly).toContain(link(fromVapi));
    expect(vapiOnly).not.toContain(link(fromService));
    expect(vapiOnly).toContain('<option value="vapi" selected="">vapi</option>');
    expect(vapiOnly).toContain('sent by vapi');
    const serviceOnly = await page('/ui/calls?platform=none');
    expect(serviceOnly).toContain(link(fromService));
    expect(serviceOnly).not.toContain(link(fromVapi));
    expect(await page('/ui/calls?platform=skype')).toContain('Platform is one of none, vapi, ');

    expect(await page(link(fromVapi))).toMatch(/<dt>Sent by<\/dt><dd class="small">vapi<\/dd>/);
    expect(await page(link(fromService))).toMatch(/<dt>Sent by<\/dt><dd class="small">the calling service<\/dd>/);
  });
});
