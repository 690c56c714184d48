import type { Command } from 'commander';
import type { Config } from '../config.js';
import { describeFetchError } from '../fetch-error.js';
import { adminToken } from './context.js';

/**
 * The running `serve`'s admin API, as the CLI's commands that change calls reach it
 * (docs/reference.md#refused-requests): which sinks a released or redelivered call goes to, and how an ingested request
 * is normalised, are the running serve's to decide, from its own config. A CLI run with another config, or none, cannot
 * strand a call.
 */

export interface AdminClientOptions {
  /** `--url`: the serve's base URL; by default this machine's, on the configured PORT. */
  url?: string;
}

/** Adds `--url` and `--config` to a command that calls the admin API. */
export function withAdminOptions(command: Command): Command {
  return command
    .option('--url <url>', 'the running serve (default: this machine, on PORT)')
    .option('-c, --config <file>', 'config file, to find the port and the admin token');
}

export type AdminCall = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  /** How long to wait for the answer: 30 s, longer for what scans the whole store (a person's erasure). */
  timeoutMs?: number,
) => Promise<unknown>;

/** The serve answered, with an error status: a command may tell one status from another (a job gone: 404). */
export class AdminReplyError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = 'AdminReplyError';
    this.status = status;
  }
}

export async function adminClient(config: Config, { url }: AdminClientOptions): Promise<AdminCall> {
  const base = (url ?? `http://127.0.0.1:${config.port}`).replace(/\/+$/, '');
  // docs/reference.md#operators: a personal token, when given, acts as its user; else the admin token, as an admin.
  const personal = config.personalToken;
  const token = personal ?? (await adminToken(config));
  if (token === undefined)
    throw new Error(
      'no token: set CALLHOOK_TOKEN (a personal token) or CALLHOOK_ADMIN_TOKEN, or run this where serve keeps its data dir (CALLHOOK_DATA_DIR)',
    );
  return async (method, path, body, timeoutMs = 30_000) => {
    let res: Response;
    try {
      res = await fetch(`${base}/admin${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new Error(`no callhook serve answers at ${base} (${describeFetchError(err)}); start it, or pass --url`);
    }
    const text = await res.text();
    let reply: unknown = text;
    try {
      reply = JSON.parse(text);
    } catch {
      // Not callhook's Error object: whatever answered is shown as it is.
    }
    if (!res.ok) {
      const message = (reply as { message?: unknown })?.message;
      // A personal token that stopped working was revoked, or its user removed: say which token was sent.
      const which = res.status === 401 && personal !== undefined ? ' (the CALLHOOK_TOKEN sent)' : '';
      throw new AdminReplyError(
        `serve at ${base} answered ${res.status}: ${typeof message === 'string' ? message : text.slice(0, 200)}${which}`,
        res.status,
      );
    }
    return reply;
  };
}
