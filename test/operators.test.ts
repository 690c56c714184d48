import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntryView, AuditPage } from '../src/admin/audit-log.js';
import type { UserView } from '../src/admin/users.js';
import { secretDigest } from '../src/operators/credentials.js';
import { openStore } from '../src/store/open.js';
import { runCallhook } from './helpers/cli.js';
import { type StoreUnderTest, storesUnderTest } from './helpers/database.js';
import { ADMIN, KEY, post, sampleCall, spawnServer, startServer, tempDir, until } from './helpers/server.js';
import { serviceUrl } from './helpers/services.js';
import { deadDeliveryIncident } from './helpers/store-inputs.js';

/**
 * Operators over real HTTP against a real serve (docs/reference.md#operators, #audit-log): users added and changed
 * with the CLI through the running serve, refused with one clear line and nothing changed on bad input; personal
 * tokens that act as their user, show their last use and stop at once when revoked or their user removed; and the
 * audit log after a scripted day of work, holding every action with who, from where, what and how it ended, and
 * nothing secret in it or in the log.
 */

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A serve of its own on the store under test; `adminToken: false` starts it with no CALLHOOK_ADMIN_TOKEN (callhook
 * keeps one, in its dir or the database).
 */
async function serve(open: () => Promise<StoreUnderTest>, { adminToken = true } = {}) {
  const store = await open();
  cleanups.push(store.drop);
  const server = await startServer({ env: { ...store.env, ...(adminToken ? {} : { CALLHOOK_ADMIN_TOKEN: '' }) } });
  cleanups.push(() => server.close());
  const env = {
    ...store.env,
    CALLHOOK_DATA_DIR: server.dataDir,
    CALLHOOK_ADMIN_TOKEN: adminToken ? ADMIN : '',
    PORT: String(server.port),
  };
  const cli = (args: string[], more: Record<string, string> = {}, stdin?: string) =>
    runCallhook(args, { ...env, ...more }, { stdin });
  return { server, cli };
}

const usersOf = async (cli: (args: string[]) => ReturnType<typeof runCallhook>) =>
  (JSON.parse((await cli(['users', 'list', '--json'])).stdout) as { users: UserView[] }).users;

const STORES = storesUnderTest(serviceUrl('postgres'), 'callhook_operators');

describe.each(STORES)('callhook users, through the running serve, on %s', (_, open) => {
  it('adds a user with a one-time link or a password from stdin, lists, changes and removes them', async () => {
    const { cli, server } = await serve(open);
    const added = await cli(['users', 'add', 'Ana@Example.com', '--role', 'operator']);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(
      new RegExp(
        `^added ana@example.com \\(operator\\)\\nsend them this link .*\\n  ${server.url}/ui/password/[\\w-]{43}\\n$`,
      ),
    );
    const set = await cli(
      ['users', 'add', 'ben@example.com', '--role', 'viewer', '--password-stdin'],
      {},
      'a long passphrase\n',
    );
    expect(set).toEqual({ code: 0, stdout: 'added ben@example.com (viewer), password set\n', stderr: '' });
    expect((await usersOf(cli)).map((u) => [u.email, u.role, u.password_set])).toEqual([
      ['ana@example.com', 'operator', false],
      ['ben@example.com', 'viewer', true],
    ]);
    expect(await cli(['users', 'role', 'ben@example.com', 'operator'])).toMatchObject({
      code: 0,
      stdout: 'ben@example.com is now operator; their dashboard sessions ended\n',
    });
    const reset = await cli(['users', 'reset', 'ben@example.com']);
    expect(reset.stdout).toMatch(/^ben@example.com: password cleared, sessions ended\nsend them this link/);
    expect((await usersOf(cli)).find((u) => u.email === 'ben@example.com')?.password_set).toBe(false);
    expect(await cli(['users', 'remove', 'BEN@example.com'])).toMatchObject({ code: 0 });
    expect((await usersOf(cli)).map((u) => u.email)).toEqual(['ana@example.com']);
  });

  it('refuses bad input with one clear line and a non-zero exit, and changes nothing', async () => {
    const { cli } = await serve(open, { adminToken: false });
    expect((await cli(['users', 'add', 'ada@example.com', '--role', 'admin'])).code).toBe(0);
    const before = await usersOf(cli);
    const refusals: [string[], RegExp, string?][] = [
      [
        ['users', 'add', 'eve@example.com', '--role', 'superuser'],
        /role: "superuser" is no role \(roles: viewer, operator, admin\)/,
      ],
      [
        ['users', 'add', 'eve@example.com', '--role', 'viewer', '--password-stdin'],
        /password: a password has at least 12 characters/,
        'short\n',
      ],
      [['users', 'add', 'not an address', '--role', 'viewer'], /email: "not an address" is not an address/],
      [['users', 'add', 'eve@localhost', '--role', 'viewer'], /email: "eve@localhost" is not an address/],
      [['users', 'add', 'ada@example.com', '--role', 'viewer'], /409: Conflict: a user ada@example.com exists already/],
      [['users', 'role', 'ada@example.com', 'boss'], /is no role/],
      [['users', 'role', 'nobody@example.com', 'viewer'], /404: Not found: no user nobody@example.com/],
      [
        ['users', 'remove', 'ada@example.com'],
        /409: Conflict: removing ada@example.com would leave no admin: set CALLHOOK_ADMIN_TOKEN first/,
      ],
      [['users', 'role', 'ada@example.com', 'operator'], /would leave no admin: set CALLHOOK_ADMIN_TOKEN first/],
      [['users', 'revoke', 'no-such-token'], /404: Not found: no token no-such-token/],
    ];
    for (const [args, message, stdin] of refusals) {
      const { code, stdout, stderr } = await cli(args, {}, stdin);
      expect({ code, stdout }, args.join(' ')).toEqual({ code: 2, stdout: '' });
      expect(stderr, args.join(' ')).toMatch(message);
      expect(stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
    }
    expect(await usersOf(cli)).toEqual(before);
  });

  it('lets the last admin user go when CALLHOOK_ADMIN_TOKEN is configured', async () => {
    const { cli } = await serve(open);
    await cli(['users', 'add', 'ada@example.com', '--role', 'admin']);
    expect(await cli(['users', 'role', 'ada@example.com', 'viewer'])).toMatchObject({ code: 0 });
    expect(await cli(['users', 'remove', 'ada@example.com'])).toMatchObject({ code: 0 });
    expect(await usersOf(cli)).toEqual([]);
  });
});

describe.each(STORES)('personal tokens on %s', (_, open) => {
  it("act as their user with the user's role, show their last use, and are refused at once once revoked or their user removed", async () => {
    const { cli } = await serve(open);
    await cli(['users', 'add', 'vera@example.com', '--role', 'viewer']);
    await cli(['users', 'add', 'otto@example.com', '--role', 'operator']);
    const made = await cli(['users', 'token', 'vera@example.com', '--name', 'laptop']);
    expect(made.code).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^chk_[\w-]{43}$/);
    expect(made.stderr).toMatch(/shown this once/);
    expect(made.stderr).toMatch(/use it: CALLHOOK_TOKEN=<the token> callhook/);
    expect(made.stderr).not.toContain(token);
    const [vera] = (await usersOf(cli)).filter((u) => u.email === 'vera@example.com');
    expect(vera!.tokens).toEqual([
      { id: expect.any(String), name: 'laptop', created_at: expect.any(String), last_used_at: null },
    ]);

    // As vera: she reads; she is refused what needs more, in one line.
    const asVera = { CALLHOOK_TOKEN: token };
    expect(await cli(['incidents', 'list'], asVera)).toMatchObject({ code: 0, stdout: 'no incidents\n' });
    const refused = await cli(['users', 'list'], asVera);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/403: Your role does not allow this: this needs the admin role; you are viewer\n$/);
    const used = (await usersOf(cli)).find((u) => u.email === 'vera@example.com')!.tokens[0]!;
    expect(used.last_used_at).not.toBeNull();
    expect((await cli(['users', 'list'])).stdout).toMatch(/laptop +\d{4}-\d\d-\d\dT[\d:]+[+-Z]/);

    // Revoked: refused from the next request.
    expect(await cli(['users', 'revoke', used.id])).toMatchObject({ code: 0, stdout: `revoked token ${used.id}\n` });
    const revoked = await cli(['incidents', 'list'], asVera);
    expect(revoked).toMatchObject({ code: 2, stdout: '' });
    expect(revoked.stderr).toMatch(/answered 401: .*\(the CALLHOOK_TOKEN sent\)\n$/);
    expect(revoked.stderr).not.toContain(token);

    // A removed user's token: refused from the next request.
    const otto = (await cli(['users', 'token', 'otto@example.com'])).stdout.trim();
    expect((await cli(['incidents', 'list'], { CALLHOOK_TOKEN: otto })).code).toBe(0);
    await cli(['users', 'remove', 'otto@example.com']);
    expect((await cli(['incidents', 'list'], { CALLHOOK_TOKEN: otto })).stderr).toMatch(/answered 401/);
  });
});

describe.each(STORES)('the audit log after a day of work on %s', (_, open) => {
  it('holds every action with its actor, address, target and outcome, and nothing secret, in the API or the log', async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        hooks: { 'end-of-call': { on_problem: 'hold' } },
        sinks: [{ name: 'jsonl', type: 'jsonl' }],
      }),
    );
    const { env: storeEnv, drop } = await open();
    cleanups.push(drop);
    const server = await spawnServer(dataDir, { ...storeEnv, CALLHOOK_CONFIG: config, LOG_LEVEL: 'info' });
    cleanups.push(async () => {
      server.child.kill('SIGTERM');
      await server.exited;
    });
    const env = { ...storeEnv, CALLHOOK_DATA_DIR: dataDir, CALLHOOK_ADMIN_TOKEN: ADMIN, CALLHOOK_CONFIG: config };
    const cli = (args: string[], more: Record<string, string> = {}, stdin?: string) =>
      runCallhook([...args, '--url', server.url], { ...env, ...more }, { stdin });
    const api = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}/admin${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, any>) };
    };

    // Morning: the admin adds the team, one with a password, and gives them tokens.
    const PASSWORD = 'correct horse battery staple';
    expect(
      (await cli(['users', 'add', 'ada@example.com', '--role', 'admin', '--password-stdin'], {}, PASSWORD)).code,
    ).toBe(0);
    const link = (await cli(['users', 'add', 'otto@example.com', '--role', 'operator'])).stdout.match(
      /\/ui\/password\/(\S+)/,
    )![1]!;
    await cli(['users', 'add', 'vera@example.com', '--role', 'viewer']);
    const token = async (email: string) => (await cli(['users', 'token', email, '--name', 'work'])).stdout.trim();
    const ada = await token('ada@example.com');
    const otto = await token('otto@example.com');
    const vera = await token('vera@example.com');

    // Calls come in: one held (a number that is none), one refused (not JSON).
    const held = ((await (await post(server.url, sampleCall({ phone_number: 'no number' }))).json()) as { id: string })
      .id;
    await post(server.url, sampleCall({ phone_number: '+91 98123 45670' }));
    await fetch(`${server.url}/webhooks/end-of-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'text/csv' },
      body: 'first_name\nRavi',
    });
    const receipt = (await api(ADMIN, 'GET', '/receipts?outcome=rejected')).body!.receipts[0].id as number;
    const store = await openStore({ dataDir, databaseUrl: storeEnv.DATABASE_URL });
    cleanups.push(() => store.close());
    const incident = await deadDeliveryIncident(store, 'jsonl');

    // The operator's day.
    expect(
      (await api(otto, 'PATCH', `/calls/${held}`, { data: { phone_number: '+91 98123 45678', first_name: 'Asha R' } }))
        .status,
    ).toBe(200);
    expect((await api(otto, 'POST', `/calls/${held}/release`)).status).toBe(200);
    expect((await api(otto, 'POST', `/calls/${held}/redeliver`, {})).status).toBe(200);
    expect((await api(otto, 'POST', '/deliveries/1/retry')).status).toBe(409);
    expect((await api(otto, 'POST', '/deliveries/retry', { sink: 'jsonl' })).status).toBe(200);
    expect(
      (
        await api(otto, 'POST', `/receipts/${receipt}/ingest`, {
          body: '{"first_name":"Ravi"}',
          content_type: 'application/json',
        })
      ).status,
    ).toBe(200);
    expect((await api(otto, 'POST', '/sinks/jsonl/pause')).status).toBe(200);
    expect((await api(otto, 'POST', '/sinks/jsonl/resume')).status).toBe(200);
    const period = await api(otto, 'POST', '/sinks/jsonl/redeliver', { from: '2026-01-01' });
    expect(period.status).toBe(202);
    expect((await api(otto, 'POST', `/incidents/${incident.id}/ack`)).body!.acknowledged_by).toBe('otto@example.com');
    // The viewer tries what is not theirs.
    expect((await api(vera, 'POST', '/sinks/jsonl/pause')).status).toBe(403);
    // The admin erases a caller, and changes the team.
    expect((await api(ada, 'POST', '/erase', { phone: '+91 98123 45670' })).status).toBe(200);
    expect((await cli(['users', 'role', 'vera@example.com', 'operator'], { CALLHOOK_TOKEN: ada })).code).toBe(0);
    const veraToken = (await usersOf((args) => cli(args))).find((u) => u.email === 'vera@example.com')!.tokens[0]!.id;
    expect((await cli(['users', 'revoke', veraToken], { CALLHOOK_TOKEN: ada })).code).toBe(0);
    expect((await cli(['users', 'reset', 'otto@example.com'], { CALLHOOK_TOKEN: ada })).code).toBe(0);
    expect((await cli(['users', 'remove', 'vera@example.com'], { CALLHOOK_TOKEN: ada })).code).toBe(0);
    // The call's edit keeps who made it.
    const call = (await api(ADMIN, 'GET', `/calls/${held}`)).body!;
    expect(call.edits.map((e: { by: string }) => e.by)).toEqual(['otto@example.com']);
    // The night's purge, run on the store.
    await until(async () => (await api(ADMIN, 'GET', `/jobs/${period.body!.job.id}`)).body!.state !== 'running');
    expect((await runCallhook(['purge', '--older-than', '3650d'], env)).code).toBe(0);

    const page = (await api(ada, 'GET', '/audit?limit=1000')).body as AuditPage;
    const seen = page.entries
      .slice()
      .reverse()
      .map(({ actor, address, action, target, outcome }: AuditEntryView) => ({
        actor,
        address,
        action,
        target,
        outcome,
      }));
    const at = (actor: string, action: string, target: string | null, outcome = 'ok') => ({
      actor,
      address: actor === 'cli' ? null : '127.0.0.1',
      action,
      target,
      outcome,
    });
    expect(seen).toEqual([
      at('admin-token', 'user.add', 'ada@example.com'),
      at('admin-token', 'user.add', 'otto@example.com'),
      at('admin-token', 'user.add', 'vera@example.com'),
      at('admin-token', 'token.add', 'ada@example.com'),
      at('admin-token', 'token.add', 'otto@example.com'),
      at('admin-token', 'token.add', 'vera@example.com'),
      at('otto@example.com', 'call.edit', held),
      at('otto@example.com', 'call.release', held),
      at('otto@example.com', 'call.redeliver', held),
      at('otto@example.com', 'delivery.retry', '1', 'CONFLICT'),
      at('otto@example.com', 'deliveries.retry', 'jsonl'),
      at('otto@example.com', 'receipt.ingest', String(receipt)),
      at('otto@example.com', 'sink.pause', 'jsonl'),
      at('otto@example.com', 'sink.resume', 'jsonl'),
      at('otto@example.com', 'sink.redeliver', 'jsonl'),
      at('otto@example.com', 'incident.ack', incident.id),
      at('vera@example.com', 'forbidden', 'POST /admin/sinks/jsonl/pause', 'FORBIDDEN'),
      at('ada@example.com', 'person.erase', expect.stringMatching(/^[\w-]{20,}$/) as unknown as string),
      at('ada@example.com', 'user.role', 'vera@example.com'),
      at('ada@example.com', 'token.revoke', 'vera@example.com'),
      at('ada@example.com', 'user.reset', 'otto@example.com'),
      at('ada@example.com', 'user.remove', 'vera@example.com'),
      at('cli', 'purge', null),
    ]);
    const details = (action: string) => page.entries.find((e) => e.action === action)!.details;
    expect((details('call.edit')!.fields as string[]).sort()).toEqual(['first_name', 'phone_number']);
    expect(details('deliveries.retry')).toMatchObject({ count: expect.any(Number) });
    expect(details('person.erase')).toMatchObject({ calls: 1 });
    expect(details('user.role')).toEqual({ from: 'viewer', role: 'operator' });
    expect(details('purge')).toMatchObject({ calls: expect.any(Number), receipts: expect.any(Number) });

    // As the CLI shows it, filtered.
    const listed = await cli(['audit', 'list', '--actor', 'otto@example.com', '--action', 'sink.pause'], {
      CALLHOOK_TOKEN: ada,
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')[1]).toMatch(/ otto@example.com +127\.0\.0\.1 +sink\.pause +jsonl +ok +-$/);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);

    // Nothing secret: no password, token, link, password hash or token digest, in the log or the API.
    const hashes = await Promise.all(
      ['ada@example.com'].map(async (email) => (await store.findUser(email))!.passwordHash!),
    );
    const secrets = [
      PASSWORD,
      ada,
      otto,
      vera,
      link,
      secretDigest(ada),
      secretDigest(otto),
      secretDigest(vera),
      secretDigest(link),
      ...hashes,
    ];
    const everything = JSON.stringify(page) + server.output();
    expect(server.output()).toMatch(/"msg":"request"/);
    for (const secret of secrets) expect(everything.includes(secret), secret.slice(0, 8)).toBe(false);
    // Nor the caller's data an edit typed.
    expect(JSON.stringify(page)).not.toContain('Asha R');
  });
});
