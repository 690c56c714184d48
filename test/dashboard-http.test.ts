import { type IncomingHttpHeaders, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, startServer, type TestServer } from './helpers/server.js';

/**
 * The dashboard's sign-in and safety as HTTP (docs/reference.md#operating and docs/reference.md#dashboard), where a
 * browser would hide what is checked: the cookie's Secure flag by scheme, proxy and config, the origin check behind a
 * proxy, the limiter shared with the bearer checks, and the headers every page carries.
 */

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const form = (body: Record<string, string>) => new URLSearchParams(body).toString();

/** A POST with the headers given as they are, Host included (fetch sets its own). */
function rawPost(
  url: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(form({ token: ADMIN }));
  });
}

async function signIn(url: string, headers: Record<string, string> = {}, token = ADMIN): Promise<Response> {
  return fetch(`${url}/ui/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, ...headers },
    body: form({ token }),
  });
}

describe('dashboard over HTTP', () => {
  it('makes the cookie Secure when the browser came over HTTPS through a trusted proxy, or when secure_cookies says so', async () => {
    server = await startServer({ config: { trust_proxy: true } });
    const viaTls = await signIn(server.url, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'dash.example.com',
      origin: 'https://dash.example.com',
    });
    expect(viaTls.status).toBe(303);
    expect(viaTls.headers.get('set-cookie')).toMatch(/; Secure/);
    const plain = await signIn(server.url);
    expect(plain.headers.get('set-cookie')).not.toMatch(/Secure/);
    await server.close();

    // Without trust_proxy the header is anyone's to write: it says nothing.
    server = await startServer();
    const untrusted = await signIn(server.url, { 'x-forwarded-proto': 'https' });
    expect(untrusted.headers.get('set-cookie')).not.toMatch(/Secure/);
    await server.close();

    server = await startServer({ config: { secure_cookies: true } });
    const always = await signIn(server.url);
    expect(always.headers.get('set-cookie')).toMatch(
      /^callhook_session=[^;]+; Max-Age=43200; Path=\/ui; HttpOnly; Secure; SameSite=Strict$/,
    );
  });

  it("checks a POST's origin against the proxy's host and scheme with trust_proxy, and against the request's without", async () => {
    server = await startServer({ config: { trust_proxy: true } });
    const proxied = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'dash.example.com' };
    expect((await signIn(server.url, { ...proxied, origin: 'https://dash.example.com' })).status).toBe(303);
    expect((await signIn(server.url, { ...proxied, origin: 'http://dash.example.com' })).status).toBe(403);
    expect((await signIn(server.url, { ...proxied, origin: 'https://evil.example.com' })).status).toBe(403);
    expect((await signIn(server.url, { ...proxied, origin: 'null' })).status).toBe(403);
    await server.close();

    server = await startServer();
    expect(
      (await signIn(server.url, { 'x-forwarded-host': 'dash.example.com', origin: 'http://dash.example.com' })).status,
    ).toBe(403);
    // A client that is no browser sends no Origin; a browser's cross-site fetch says so.
    expect(
      (
        await fetch(`${server.url}/ui/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form({ token: ADMIN }),
        })
      ).status,
    ).toBe(303);
    const crossSite = await fetch(`${server.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
      body: form({ token: ADMIN }),
    });
    expect(crossSite.status).toBe(403);
  });

  it('answers a refused POST with a page, in the dashboard layout, that says what to check behind a proxy', async () => {
    server = await startServer();
    // What a plain `proxy_pass` does: nginx sends its upstream's name as Host, the browser's Origin is the site's.
    const refused = await rawPost(server.url, '/ui/login', {
      host: 'callhook',
      origin: 'https://callhook.example.com',
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect(refused.headers['content-security-policy']).toContain("default-src 'self'");
    const page = refused.text;
    expect(page.match(/<h1>/g)).toHaveLength(1);
    expect(page).toContain('<link rel="stylesheet" href="/ui/assets/style.css"/>');
    expect(page).toMatch(
      /sent it from <b>https:\/\/callhook.example.com<\/b>, but callhook was reached as <b>callhook<\/b>/,
    );
    expect(page).toContain('proxy_set_header Host $http_host;');
    expect(page).toContain('proxy_set_header Host $host;');
    expect(page).toContain('<code>X-Forwarded-Host</code>');
    expect(page).toContain('<code>trust_proxy: true</code>');
    expect(page).toContain('href="/ui/login"');
    await server.close();

    // Behind a trusted proxy the page names the scheme and host the proxy gave, so a wrong one shows.
    server = await startServer({ config: { trust_proxy: true } });
    const proxied = await signIn(server.url, {
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'dash.example.com',
      origin: 'https://dash.example.com',
    });
    expect(proxied.status).toBe(403);
    expect(await proxied.text()).toContain('but callhook was reached as <b>http://dash.example.com</b>');
    const nullOrigin = await signIn(server.url, { origin: 'null' });
    expect(await nullOrigin.text()).toContain('no site (its origin was &quot;null&quot;)');
  });

  it('counts a wrong sign-in toward the same limiter as the bearer checks, and never refuses the right token', async () => {
    server = await startServer({ config: { auth_limit: { max: 3, window: '1m' } } });
    expect(
      (await fetch(`${server.url}/admin/calls`, { headers: { authorization: 'Bearer wrong-token-0123456789' } }))
        .status,
    ).toBe(401);
    expect((await signIn(server.url, {}, 'wrong-one')).status).toBe(401);
    expect((await signIn(server.url, {}, 'wrong-two')).status).toBe(401);
    const limited = await signIn(server.url, {}, 'wrong-three');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many failed sign-ins');
    expect(
      (await fetch(`${server.url}/admin/calls`, { headers: { authorization: 'Bearer wrong-token-0123456789' } }))
        .status,
    ).toBe(429);
    expect((await signIn(server.url)).status).toBe(303);
  });

  it('sends every page with a Content-Security-Policy that allows nothing from another origin, and never caches one', async () => {
    server = await startServer();
    const cookie = (await signIn(server.url)).headers.get('set-cookie')!.split(';')[0]!;
    for (const path of ['/ui/login', '/ui', '/ui/calls', '/ui/no-such-page']) {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie } });
      const csp = res.headers.get('content-security-policy')!;
      expect(csp, path).toContain("default-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toMatch(/https?:|\*|'unsafe-inline'/);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    // Without a session every page but sign-in sends the browser there.
    for (const path of ['/ui', '/ui/calls', '/ui/sinks', '/ui/no-such-page']) {
      const res = await fetch(`${server.url}${path}`, { redirect: 'manual' });
      expect([res.status, res.headers.get('location')], path).toEqual([303, '/ui/login']);
    }
    const post = await fetch(`${server.url}/ui/sinks/jsonl/pause`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: server.url },
    });
    expect([post.status, post.headers.get('location')]).toEqual([303, '/ui/login']);
  });
});
