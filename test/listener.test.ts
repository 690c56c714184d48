import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * A campaign's end opens thousands of connections at once, one per call: serve asks the kernel to queue up to 4096
 * of them before they are accepted, not Node's 511 (src/main.ts). For a listening socket, `ss` shows the queue's
 * size as Send-Q; the kernel caps it at net.core.somaxconn. The banner names the dashboard as it names each hook.
 */

describe('the listener', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('queues as many connections as the kernel allows, up to 4096', () => {
    const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    const line = execFileSync('ss', ['-ltnH', `sport = :${server.port}`], { encoding: 'utf8' }).trim();
    // State, Recv-Q, Send-Q (the backlog), local address, peer address.
    const backlog = Number(line.split(/\s+/)[2]);
    expect(backlog).toBe(Math.min(4096, somaxconn));
    expect(backlog).toBeGreaterThan(511);
  });

  it('prints the dashboard beside the webhook URL, and it answers there', async () => {
    const line = server.printed.find((l) => l.includes('dashboard:'));
    expect(line).toBe(`  dashboard: http://127.0.0.1:${server.port}/ui (sign in with the admin token)`);
    const page = await fetch(line!.split(' ')[3]!, { redirect: 'follow' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form');
  });
});
