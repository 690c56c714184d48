import { PermanentError, RetryableError } from '../errors.js';
import { sendRequest } from '../shared/http-response.js';
import { parseJson } from '../shared/refusal.js';
import { refusal } from './reply.js';

/**
 * Zoho's access token, from the refresh-token grant (https://www.zoho.com/crm/developer/docs/api/v6/refresh.html):
 * `POST <token_url>` with `refresh_token`, `client_id`, `client_secret` and `grant_type=refresh_token`. Zoho's pages
 * show them as query parameters; they go in a form body here (RFC 6749 section 6, which Zoho Accounts accepts), so
 * no secret is ever part of a URL a proxy logs.
 *
 * A token lasts an hour (`expires_in`) and Zoho Accounts lets a refresh token make only ten in ten minutes, then
 * blocks it for the rest of them (https://www.zoho.com/accounts/protocol/oauth/token-limits.html): so the token is
 * kept until shortly before it expires, and one request at a time is made for every delivery that needs one.
 */

export interface TokenSource {
  /** A token valid now: the kept one, or a new one (one request at a time, shared by every delivery waiting). */
  get(signal: AbortSignal): Promise<string>;
  /** Zoho refused `token` (401 INVALID_TOKEN): forget it, unless a newer one has already replaced it. */
  invalidate(token: string): void;
}

export interface TokenOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** Told each new token, so that callhook masks it wherever it writes text (SinkContext `secret`). */
  onToken?: (token: string) => void;
  now?: () => number;
}

/** A revoked refresh token, a deleted or wrong client: no later request can succeed (docs/reference.md#crm-sinks). */
const PERMANENT = new Set(['invalid_code', 'invalid_client']);
/** Renewed this long before Zoho says it expires, so a token never runs out between the check and the request. */
const MARGIN_MS = 5 * 60_000;
/** The token request is shared, so no one delivery's signal may end it; it has its own time-out instead. */
const TOKEN_TIMEOUT_MS = 30_000;

interface TokenReply {
  access_token?: unknown;
  /** Seconds (Zoho CRM); some Zoho services send milliseconds here and the seconds in `expires_in_sec`. */
  expires_in?: unknown;
  expires_in_sec?: unknown;
  error?: unknown;
  error_description?: unknown;
}

export function zohoTokens({
  tokenUrl,
  clientId,
  clientSecret,
  refreshToken,
  onToken,
  now = Date.now,
}: TokenOptions): TokenSource {
  let kept: { token: string; expiresAt: number } | undefined;
  let inFlight: Promise<string> | undefined;

  async function request(): Promise<string> {
    const body = new URLSearchParams({
      refresh_token: refreshToken,
      client_id: clientId,
      client_secret: clientSecret,
      grant_type: 'refresh_token',
    });
    const init = {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        'user-agent': 'callhook',
      },
      body,
    };
    let status: number | undefined;
    let reply: TokenReply;
    try {
      const response = await sendRequest(tokenUrl, init, {
        signal: new AbortController().signal,
        timeoutMs: TOKEN_TIMEOUT_MS,
      });
      status = response.status;
      reply = (parseJson(await response.text()) ?? {}) as TokenReply;
    } catch (err) {
      const refused = refusal(err);
      const body = refused?.body;
      // A refusal Zoho explains is judged by its words below; anything else (5xx without JSON, the network) as
      // classified.
      if (!refused || body === null || typeof body !== 'object' || !('error' in body)) throw err;
      status = refused.status;
      reply = body as TokenReply;
    }
    const token = reply.access_token;
    if (typeof token !== 'string' || token === '') throw tokenError(reply, status);
    const seconds = Number(reply.expires_in_sec ?? reply.expires_in);
    const lifeMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 3600_000;
    onToken?.(token);
    kept = { token, expiresAt: now() + lifeMs - Math.min(MARGIN_MS, lifeMs / 2) };
    return token;
  }

  return {
    get(signal) {
      if (kept && now() < kept.expiresAt) return Promise.resolve(kept.token);
      if (signal.aborted) return Promise.reject(signal.reason);
      if (!inFlight) {
        inFlight = request().finally(() => {
          inFlight = undefined;
        });
        // Every delivery that waited may have given up on it: its failure is theirs to report, never unhandled.
        inFlight.catch(() => undefined);
      }
      return abortable(inFlight, signal);
    },
    invalidate(token) {
      if (kept?.token === token) kept = undefined;
    },
  };
}

/**
 * Zoho Accounts answers a refused grant with `{ "error": "invalid_code" }` (often with status 200). Its words go
 * into the message, the request's never: it holds the secrets.
 */
function tokenError(reply: TokenReply, status: number | undefined): Error {
  const code = typeof reply.error === 'string' ? reply.error : undefined;
  const description = typeof reply.error_description === 'string' ? reply.error_description : undefined;
  const said = [code, description].filter(Boolean).join(': ') || 'no access_token in the reply';
  const message = `Zoho Accounts refused the access token request: ${said}`;
  if (code !== undefined && PERMANENT.has(code))
    return new PermanentError(message, { status: status !== undefined && status >= 400 ? status : undefined });
  // "Access Denied: You have made too many requests continuously": Zoho throttles token requests. Every delivery needs
  // a token, so it is a rate limit of the whole sink (docs/reference.md#what-every-sink-shares), waiting the worker's
  // back-off step.
  const throttled = code === 'Access Denied' || /too many requests/i.test(description ?? '');
  return new RetryableError(message, {
    status: throttled ? 429 : status !== undefined && status >= 400 ? status : undefined,
  });
}

/** The shared request, given up by this one delivery when its own signal fires (the others still wait for it). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
