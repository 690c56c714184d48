import { Command } from 'commander';
import type { PasswordLink, TokenView, UserView } from '../admin/users.js';
import { type AdminClientOptions, adminClient, withAdminOptions } from './admin-client.js';
import { commandConfig } from './context.js';
import { table } from './incidents.js';
import type { CliIo, CommandIo } from './io.js';
import { zonedIso } from './zoned-time.js';

/**
 * `callhook users add|list|role|remove|reset|token|revoke` (docs/reference.md#operators) ask the running serve through
 * its admin API (admin-client.ts), which checks what they are given and keeps each change in the audit log under
 * whoever the command runs as (CALLHOOK_TOKEN's user, else `admin-token`).
 */

type Options = AdminClientOptions & { config?: string };

const user = (email: string) => `/users/${encodeURIComponent(email)}`;

export function usersCommand(io: CommandIo): Command {
  const users = new Command('users').description('the people who run callhook: their roles and personal tokens');

  withAdminOptions(users.command('add').description('add a user; prints a one-time link to set their password'))
    .argument('<email>', 'their e-mail address')
    .requiredOption('--role <role>', 'viewer, operator or admin')
    .option('--password-stdin', 'read their password from stdin (at least 12 characters) instead of making a link')
    .action(async (email: string, opts: Options & { role: string; passwordStdin?: boolean }) => {
      const config = commandConfig(io.env, opts.config);
      const password = opts.passwordStdin ? await readPassword(io) : undefined;
      const admin = await adminClient(config, opts);
      const added = (await admin('POST', '/users', {
        email,
        role: opts.role,
        ...(password === undefined ? {} : { password }),
      })) as { user: UserView; link?: PasswordLink };
      if (!added.link) return io.out.write(`added ${added.user.email} (${added.user.role}), password set\n`);
      await io.out.write(`added ${added.user.email} (${added.user.role})\n${linkText(added.link, config.timezone)}`);
    });

  withAdminOptions(users.command('list').description('every user with their role and personal tokens'))
    .option('--json', "the admin API's reply as it is")
    .action(async (opts: Options & { json?: boolean }) => {
      const config = commandConfig(io.env, opts.config);
      const admin = await adminClient(config, opts);
      const reply = (await admin('GET', '/users')) as { users: UserView[] };
      if (opts.json) return io.out.write(`${JSON.stringify(reply, null, 2)}\n`);
      if (reply.users.length === 0) return io.out.write('no users (the admin token is the only way in)\n');
      await io.out.write(usersText(reply.users, zonedIso(config.timezone)));
    });

  withAdminOptions(users.command('role').description("change a user's role; their dashboard sessions end"))
    .argument('<email>', 'the user')
    .argument('<role>', 'viewer, operator or admin')
    .action(async (email: string, role: string, opts: Options) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const changed = (await admin('PATCH', user(email), { role })) as UserView;
      await io.out.write(`${changed.email} is now ${changed.role}; their dashboard sessions ended\n`);
    });

  withAdminOptions(users.command('remove').description('remove a user with their tokens and sessions'))
    .argument('<email>', 'the user')
    .action(async (email: string, opts: Options) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      await admin('DELETE', user(email));
      await io.out.write(`removed ${email.trim().toLowerCase()}, with their tokens and sessions\n`);
    });

  withAdminOptions(
    users
      .command('reset')
      .description("clear a user's password, end their sessions, and print a new one-time link to set one"),
  )
    .argument('<email>', 'the user')
    .action(async (email: string, opts: Options) => {
      const config = commandConfig(io.env, opts.config);
      const admin = await adminClient(config, opts);
      const reset = (await admin('POST', `${user(email)}/reset`)) as { user: UserView; link: PasswordLink };
      await io.out.write(
        `${reset.user.email}: password cleared, sessions ended\n${linkText(reset.link, config.timezone)}`,
      );
    });

  withAdminOptions(
    users
      .command('token')
      .description("make a personal token with the user's role, for the admin API and the CLI; shown this once"),
  )
    .argument('<email>', 'the user')
    .option('--name <name>', 'what it is for (a laptop, a script)')
    .action(async (email: string, opts: Options & { name?: string }) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      const made = (await admin(
        'POST',
        `${user(email)}/tokens`,
        opts.name === undefined ? {} : { name: opts.name },
      )) as {
        token: string;
        info: TokenView;
      };
      // The token alone on stdout, so `$(callhook users token …)` is the token; how to use it on stderr.
      await io.out.write(`${made.token}\n`);
      io.stderr.write(
        `token ${made.info.id} (${made.info.name}) for ${email.trim().toLowerCase()}, shown this once: keep it now.\n` +
          'use it: CALLHOOK_TOKEN=<the token> callhook … (or Authorization: Bearer <the token> on /admin)\n' +
          `revoke it: callhook users revoke ${made.info.id}\n`,
      );
    });

  withAdminOptions(users.command('revoke').description('revoke a personal token (users list shows their ids)'))
    .argument('<token-id>', 'the token')
    .action(async (id: string, opts: Options) => {
      const admin = await adminClient(commandConfig(io.env, opts.config), opts);
      await admin('DELETE', `/tokens/${encodeURIComponent(id)}`);
      await io.out.write(`revoked token ${id}\n`);
    });

  return users;
}

/** The link to pass on, and until when it works. */
function linkText(link: PasswordLink, timezone: string): string {
  const until = zonedIso(timezone)(link.expires_at);
  return `send them this link to set their password (it works once, until ${until}):\n  ${link.url}\n`;
}

/** One row a user, then one indented row for each of their tokens. */
export function usersText(users: readonly UserView[], at: (iso: string) => string): string {
  const rows = [['EMAIL', 'ROLE', 'PASSWORD', 'CREATED', 'TOKEN', 'LAST USED']];
  for (const u of users) {
    rows.push([u.email, u.role, u.password_set ? 'set' : 'link sent', at(u.created_at), '', '']);
    for (const t of u.tokens)
      rows.push([
        `  ${t.id}`,
        '',
        '',
        at(t.created_at),
        t.name.replace(/\s+/g, ' '),
        t.last_used_at ? at(t.last_used_at) : 'never',
      ]);
  }
  return table(rows);
}

/**
 * The password as piped in (`printf %s "$PASSWORD" | callhook users add … --password-stdin`): the whole input but one
 * line ending, which `echo` adds and no one means as part of it. Never a prompt: a password typed on a terminal
 * would be echoed.
 */
async function readPassword({ stdin }: Pick<CliIo, 'stdin'>): Promise<string> {
  if (stdin.isTTY) throw new Error('--password-stdin reads a pipe: printf %s "$PASSWORD" | callhook users add …');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  const password = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (password === '') throw new Error('--password-stdin: stdin held no password');
  return password;
}
