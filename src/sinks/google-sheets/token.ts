import { sign } from 'node:crypto';
import { PermanentError, RetryableError } from '../errors.js';
import { sendRequest } from '../shared/http-response.js';
import { replyJson, reworded } from '../shared/refusal.js';
import type { ServiceAccount } from './credentials.js';

/**
 * An access token for the service account, by the OAuth 2.0 JWT bearer grant Google documents for server-to-server
 * applications (https://developers.google.com/identity/protocols/oauth2/service-account#httprest): a JWT signed with
 * the account's private key (RS256), posted to the token endpoint, exchanged for a bearer token that lasts an hour.
 * The token is kept until shortly before it expires, and concurrent deliveries share the one request for a new one.
 */

/** Read and write the spreadsheets the account is given (https://developers.google.com/workspace/sheets/api/scopes). */
export const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';
/** RFC 7523 section 2.1, as Google's documentation gives it. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** "The expiration time of the assertion … has a maximum of 1 hour after the issued time." */
const ASSERTION_SECONDS = 3600;
/** A token is renewed this long before Google says it expires, so none expires between the check and its request. */
const RENEW_EARLY_MS = 60_000;
/** The token request is shared by deliveries, so no single delivery's signal may cut it short: it has its own limit. */
const TOKEN_TIMEOUT_MS = 30_000;

export interface TokenSource {
  /** A valid access token, fetched when there is none. */
  token(signal: AbortSignal): Promise<string>;
  /** Forgets `token` (the API refused it), so the next call fetches another. */
  invalidate(token: string): void;
  /** Ends a request under way (shutdown). */
  close(): void;
}

export interface TokenOptions {
  account: ServiceAccount;
  tokenUrl: string;
  /** Told each access token as it arrives, to be masked like a configured secret (fetched-tokens.ts). */
  onToken?: (token: string) => void;
  now?: () => number;
}

export function serviceAccountTokens({ account, tokenUrl, onToken, now = Date.now }: TokenOptions): TokenSource {
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const closing = new AbortController();

  const fetchToken = async (): Promise<string> => {
    const body = new URLSearchParams({
      grant_type: JWT_BEARER,
      assertion: signedAssertion(account, { audience: tokenUrl, now: now() }),
    });
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      'user-agent': 'callhook',
    };
    let response: Response;
    try {
      response = await sendRequest(
        tokenUrl,
        { method: 'POST', headers, body: body.toString() },
        { signal: closing.signal, timeoutMs: TOKEN_TIMEOUT_MS },
      );
    } catch (err) {
      throw tokenError(err, account.clientEmail);
    }
    const reply = (await response.json().catch(() => undefined)) as
      | { access_token?: unknown; expires_in?: unknown }
      | undefined;
    if (typeof reply?.access_token !== 'string' || reply.access_token === '') {
      // A 2xx without a token is not Google's token endpoint (a proxy's page): token_url is wrong.
      throw new PermanentError(`the token endpoint (token_url) answered ${response.status} without an access_token`);
    }
    const seconds = typeof reply.expires_in === 'number' && reply.expires_in > 0 ? reply.expires_in : ASSERTION_SECONDS;
    onToken?.(reply.access_token);
    cached = { token: reply.access_token, renewAt: now() + seconds * 1000 - RENEW_EARLY_MS };
    return reply.access_token;
  };

  return {
    token(signal) {
      // Before a request is started that nobody would wait for.
      if (signal.aborted) return Promise.reject(signal.reason);
      if (cached && now() < cached.renewAt) return Promise.resolve(cached.token);
      pending ??= fetchToken().finally(() => {
        pending = undefined;
      });
      return untilAborted(pending, signal);
    },
    invalidate(token) {
      if (cached?.token === token) cached = undefined;
    },
    close() {
      closing.abort(new RetryableError('shutting down'));
    },
  };
}

/** The signed JWT of the grant: header `{"alg":"RS256","typ":"JWT"}` and the claim set Google's page lists. */
export function signedAssertion(
  account: Pick<ServiceAccount, 'clientEmail' | 'privateKey'>,
  { audience, now }: { audience: string; now: number },
): string {
  const iat = Math.floor(now / 1000);
  const header = base64url({ alg: 'RS256', typ: 'JWT' });
  const claims = base64url({
    iss: account.clientEmail,
    scope: SHEETS_SCOPE,
    aud: audience,
    exp: iat + ASSERTION_SECONDS,
    iat,
  });
  const input = `${header}.${claims}`;
  // RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 section 3.3), node's default padding for an RSA key.
  const signature = sign('sha256', Buffer.from(input), account.privateKey).toString('base64url');
  return `${input}.${signature}`;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * The token endpoint answers an error as RFC 6749 section 5.2 does, `{"error", "error_description"}`: `invalid_grant`
 * for a signature no key of the account matches (a deleted key: "Invalid JWT Signature.") or an account disabled or
 * deleted ("Invalid grant: account not found"), `invalid_client` and the like with 400 or 401. Those can never
 * succeed and are permanent, in Google's words; a 429 or 5xx is retried, as the classifier made it.
 */
function tokenError(err: unknown, clientEmail: string): unknown {
  if (!(err instanceof RetryableError || err instanceof PermanentError)) return err;
  const reply = replyJson(err) as { error?: unknown; error_description?: unknown } | undefined;
  const code = typeof reply?.error === 'string' ? reply.error : undefined;
  if (!code) return err;
  const description =
    typeof reply?.error_description === 'string' && reply.error_description !== ''
      ? `: ${reply.error_description}`
      : '';
  return reworded(err, `Google refused a token for the service account ${clientEmail}: ${code}${description}`);
}

/**
 * The shared promise, given up by one delivery whose signal aborts (its time-out, shutdown) without ending it for the
 * others.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
