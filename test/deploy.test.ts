import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, type ChildServer, closedPort, KEY, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';

/**
 * The files under deploy/ as a server runs them (docs/deploying.md): the systemd unit passes `systemd-analyze
 * verify`; the nginx block passes `nginx -t` and, started for real on 127.0.0.1 with a certificate made here, in front
 * of a spawned `serve` with deploy/callhook.yaml (trust_proxy), carries a webhook over HTTPS, a sign-in to the
 * dashboard and the client's address; a plain `proxy_pass` gets the page that says what to check; the Caddyfile
 * passes `caddy validate`. `.ci/run` installs nginx and Caddy; a machine without them fails here, it never skips.
 */

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);

const NGINX = '/usr/sbin/nginx';
const CADDY = '/usr/bin/caddy';
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';
const OPENSSL = '/usr/bin/openssl';

/** A tool these tests run, or a failure that says how to get it. */
function tool(path: string, install: string): string {
  if (!existsSync(path)) throw new Error(`the deployment tests need ${path}: ${install} (.ci/run does)`);
  return path;
}

/** `text` with `from` replaced by `to`, every time; a shipped file that no longer holds `from` fails the test. */
function substitute(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`expected ${JSON.stringify(from)} in the file`);
  return text.replaceAll(from, to);
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTPS request that trusts the certificate made here, from a local address of our choosing. */
function https(
  url: string,
  {
    ca,
    method = 'GET',
    headers = {},
    body,
    from,
  }: {
    ca: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    from?: string;
  },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, method, headers, localAddress: from }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Ends a child: SIGTERM, then SIGKILL when it has not exited within `graceMs`. */
async function stop(child: ChildProcess, exited: Promise<unknown>, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

describe('deploy/callhook.service', () => {
  it('passes systemd-analyze verify, run from the built bin, waiting out the drain before it kills', async () => {
    const analyze = tool(SYSTEMD_ANALYZE, 'apt-get install -y systemd');
    const unit = readFileSync(join(ROOT, 'deploy', 'callhook.service'), 'utf8');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { callhook: string } };
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as {
      compilerOptions: { rootDir: string; outDir: string };
    };

    // The unit runs the package's bin, which the build makes from src/cli/index.ts.
    expect(unit).toContain(`ExecStart=/usr/bin/node /opt/callhook/${pkg.bin.callhook} serve\n`);
    expect(build.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    expect(pkg.bin.callhook).toBe('dist/cli/index.js');
    expect(existsSync(join(ROOT, 'src', 'cli', 'index.ts'))).toBe(true);
    // docs/operating.md#shutdown: the drain ends within shutdown_grace (10 s by default) + 5 s.
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(15);

    // systemd checks that the program exists: this machine's node and this checkout stand in for the server's.
    const dir = tempDir('callhook-unit-');
    const local = substitute(substitute(unit, '/usr/bin/node', process.execPath), '/opt/callhook', ROOT);
    writeFileSync(join(dir, 'callhook.service'), local);
    const { stdout, stderr } = await run(analyze, ['verify', join(dir, 'callhook.service')]);
    // A misspelt key or a bad value is only a warning to systemd: here it fails.
    expect(stdout + stderr).toBe('');

    // And it does fail on what the unit would not survive.
    writeFileSync(
      join(dir, 'callhook.service'),
      local.replace(`ExecStart=${process.execPath}`, 'ExecStart=/nonexistent/node'),
    );
    await expect(run(analyze, ['verify', join(dir, 'callhook.service')])).rejects.toThrow(/not executable/);
  });
});

describe('deploy/nginx.conf in front of serve', { timeout: 30_000 }, () => {
  const dir = tempDir('callhook-nginx-');
  const cleanups: (() => Promise<void>)[] = [];
  let serves: ChildServer[];
  let cert: string;
  let conf: string;
  let https443: string;
  let http80: string;
  let plain: string;

  beforeAll(async () => {
    const nginx = tool(NGINX, 'apt-get install -y nginx');
    const openssl = tool(OPENSSL, 'apt-get install -y openssl');

    // Two serves on one data dir, as docs/deploying.md#restarting-without-a-gap runs them.
    serves = [];
    for (let i = 0; i < 2; i++) {
      const serve = await spawnServer(join(dir, 'data'), {
        CALLHOOK_CONFIG: join(ROOT, 'deploy', 'callhook.yaml'),
        LOG_LEVEL: 'info',
      });
      cleanups.push(() => stop(serve.child, serve.exited));
      serves.push(serve);
    }
    const [first, second] = serves.map((serve) => new URL(serve.url).port);

    await run(openssl, [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      join(dir, 'privkey.pem'),
      '-out',
      join(dir, 'fullchain.pem'),
    ]);
    cert = readFileSync(join(dir, 'fullchain.pem'), 'utf8');

    const [tls, plainHttp, naive] = [await closedPort(), await closedPort(), await closedPort()];
    https443 = `https://127.0.0.1:${tls}`;
    http80 = `http://127.0.0.1:${plainHttp}`;
    plain = `http://127.0.0.1:${naive}`;

    // The block as shipped, but for the addresses, the certificate and the challenge folder of this machine.
    let block = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
    block = substitute(block, 'server 127.0.0.1:8787;', `server 127.0.0.1:${first};`);
    block = substitute(block, '# server 127.0.0.1:8788;', `server 127.0.0.1:${second};`);
    block = substitute(block, 'listen 443 ssl;', `listen 127.0.0.1:${tls} ssl;`);
    block = substitute(block, 'listen 80;', `listen 127.0.0.1:${plainHttp};`);
    block = substitute(block, 'listen [::]:443 ssl;', '');
    block = substitute(block, 'listen [::]:80;', '');
    block = substitute(block, '/etc/letsencrypt/live/callhook.example.com', dir);
    block = substitute(block, '/var/www/html', join(dir, 'webroot'));
    block = substitute(block, 'callhook.example.com', '127.0.0.1');
    writeFileSync(join(dir, 'callhook.conf'), block);
    mkdirSync(join(dir, 'webroot', '.well-known', 'acme-challenge'), { recursive: true });
    writeFileSync(join(dir, 'webroot', '.well-known', 'acme-challenge', 'token-1'), 'token-1.proof');

    // nginx itself, in this folder: one process in the foreground, its pid, logs and temporary files here. Beside the
    // block, the plain proxy_pass someone writes first, which passes no Host.
    conf = join(dir, 'nginx.conf');
    writeFileSync(
      conf,
      `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 64; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/callhook.conf;
  server {
    listen 127.0.0.1:${naive};
    location / { proxy_pass http://callhook; }
  }
}
`,
    );
    const test = await run(nginx, ['-t', '-p', dir, '-c', conf, '-e', join(dir, 'error.log')]);
    expect(test.stderr).toContain('syntax is ok');
    expect(test.stderr).toContain('test is successful');

    const child = spawn(nginx, ['-p', dir, '-c', conf, '-e', join(dir, 'error.log')], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(() => stop(child, exited));
    await until(async () => (await listening(tls)) || child.exitCode !== null, { timeoutMs: 10_000 });
    if (child.exitCode !== null) throw new Error(`nginx exited:\n${readFileSync(join(dir, 'error.log'), 'utf8')}`);
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('accepts a webhook over HTTPS, and serve logs the address of the client nginx forwarded', async () => {
    // From 127.0.0.2, nginx's peer; nginx reaches serve from 127.0.0.1. The client's own X-Forwarded-For is ignored.
    const reply = await https(`${https443}/webhooks/end-of-call`, {
      ca: cert,
      from: '127.0.0.2',
      method: 'POST',
      headers: {
        authorization: `Bearer ${KEY}`,
        'content-type': 'application/json',
        'x-forwarded-for': '203.0.113.9',
      },
      body: JSON.stringify(sampleCall({ call_id: 'through-nginx' })),
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ status: 'accepted', dedup_key: 'call_id:through-nginx' });
    expect(reply.headers['strict-transport-security']).toBe('max-age=31536000');

    const logged = await until(() =>
      serves
        .flatMap((serve) => serve.output().split('\n'))
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: string; path?: string; remote?: string; status?: number })
        .find((line) => line.msg === 'request' && line.path === '/webhooks/end-of-call'),
    );
    expect(logged).toMatchObject({ status: 200, remote: '127.0.0.2' });
  });

  it("lets callhook answer a body over its limit itself, with its JSON Error object, not nginx's page", async () => {
    const reply = await https(`${https443}/webhooks/end-of-call`, {
      ca: cert,
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...sampleCall(), call_summary: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ error: 413 });
  });

  it('signs in to the dashboard through nginx: the cookie is Secure and opens the overview', async () => {
    const form = await https(`${https443}/ui/login`, { ca: cert });
    expect(form.status).toBe(200);
    expect(form.body).toContain('Admin token');

    const signIn = await https(`${https443}/ui/login`, {
      ca: cert,
      method: 'POST',
      // What the browser sends from the sign-in page it was shown.
      headers: { origin: https443, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.location).toBe('/ui');
    const setCookie = signIn.headers['set-cookie']?.[0] ?? '';
    expect(setCookie).toMatch(/; Secure/);

    const overview = await https(`${https443}/ui`, { ca: cert, headers: { cookie: setCookie.split(';')[0]! } });
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('aria-current="page"');
    expect(overview.body).toContain('Sign out');
  });

  it('redirects plain HTTP to HTTPS, and serves the certificate challenge there', async () => {
    const redirect = await fetch(`${http80}/ui/login`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('https://127.0.0.1/ui/login');
    const challenge = await fetch(`${http80}/.well-known/acme-challenge/token-1`);
    expect(await challenge.text()).toBe('token-1.proof');
  });

  it('behind a plain proxy_pass, answers the sign-in with the page that says to pass Host', async () => {
    const refused = await fetch(`${plain}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: plain, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ADMIN }).toString(),
    });
    expect(refused.status).toBe(403);
    const page = await refused.text();
    expect(page).toContain(`sent it from <b>${plain}</b>, but callhook was reached as <b>callhook</b>`);
    expect(page).toContain('proxy_set_header Host $http_host;');
  });

  it('restarts one of two serves without a gap: a connection it refuses goes to the other, and no call is lost', async () => {
    const [, second] = serves;
    await stop(second!.child, second!.exited);
    const replies = [];
    for (let i = 0; i < 6; i++) {
      replies.push(
        await https(`${https443}/webhooks/end-of-call`, {
          ca: cert,
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(sampleCall({ call_id: `during-restart-${i}` })),
        }),
      );
    }
    expect(replies.map((r) => [r.status, JSON.parse(r.body).status])).toEqual(
      Array.from({ length: 6 }, () => [200, 'accepted']),
    );
  });
});

describe('deploy/Caddyfile', () => {
  it('passes caddy validate', async () => {
    const caddy = tool(CADDY, 'apt-get install -y caddy');
    const home = tempDir('callhook-caddy-');
    const { stdout } = await run(caddy, ['validate', '--config', join(ROOT, 'deploy', 'Caddyfile')], {
      // Caddy keeps its state under the home folder; validating writes none, but give it one of its own.
      env: { ...process.env, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
    });
    expect(stdout).toContain('Valid configuration');
  });
});
