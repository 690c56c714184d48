import { PermanentError } from '../errors.js';
import { sendRequest } from '../shared/http-response.js';
import { parseJson } from '../shared/refusal.js';
import { crmError, refusal, zohoError, zohoRetryAfter } from './reply.js';
import type { TokenSource } from './token.js';

/**
 * One Zoho CRM REST request with the access token (`Authorization: Zoho-oauthtoken <token>`,
 * https://www.zoho.com/crm/developer/docs/api/v6/oauth-overview.html), its reply's JSON (none for a 204, which Zoho
 * answers when a search or a related list finds nothing), or an error the worker classifies with Zoho's own code and
 * message (docs/reference.md#sinks-and-delivery, docs/reference.md#queues-and-databases and
 * docs/reference.md#crm-sinks).
 *
 * A 401 for the token (INVALID_TOKEN: expired, or replaced by newer ones) is asked once more with a new token;
 * a second 401, or one for a missing scope (OAUTH_SCOPE_MISMATCH, which a new token of the same grant cannot cure),
 * ends the delivery with Zoho's words.
 */

export type Method = 'GET' | 'POST' | 'PUT';

export interface ZohoReply<T> {
  status: number;
  /** Undefined for a 204 No Content. */
  body: T | undefined;
}

export interface ZohoClient {
  request<T>(
    method: Method,
    path: string,
    options?: { query?: Record<string, string>; body?: unknown },
  ): Promise<ZohoReply<T>>;
}

export interface ClientOptions {
  apiUrl: string;
  tokens: TokenSource;
  signal: AbortSignal;
}

export function zohoClient({ apiUrl, tokens, signal }: ClientOptions): ZohoClient {
  const base = apiUrl.replace(/\/+$/, '');
  return {
    async request<T>(
      method: Method,
      path: string,
      { query, body }: { query?: Record<string, string>; body?: unknown } = {},
    ): Promise<ZohoReply<T>> {
      const url = `${base}${path}${query ? `?${new URLSearchParams(query)}` : ''}`;
      const send = (token: string) => {
        const headers: Record<string, string> = {
          authorization: `Zoho-oauthtoken ${token}`,
          accept: 'application/json',
          'user-agent': 'callhook',
        };
        if (body !== undefined) headers['content-type'] = 'application/json';
        const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
        return sendRequest(url, init, { signal, retryAfterFromHeaders: zohoRetryAfter });
      };
      // The query holds a caller's number: it stays out of messages, the path is enough to say what was asked.
      const what = `${method} ${path}`;
      const explained = (err: unknown) => {
        const refused = refusal(err);
        return refused ? crmError(what, refused, err) : err;
      };
      // A token request's own errors are the worker's already, in Zoho Accounts' words (token.ts).
      const token = await tokens.get(signal);
      let response: Response;
      try {
        response = await send(token);
      } catch (err) {
        if (!tokenRefused(err)) throw explained(err);
        tokens.invalidate(token);
        const renewed = await tokens.get(signal);
        response = await send(renewed).catch((again: unknown) => {
          throw explained(again);
        });
      }
      if (response.status === 204) {
        await response.body?.cancel();
        return { status: 204, body: undefined };
      }
      const text = await response.text();
      const parsed = parseJson(text);
      // A 2xx that is not JSON is not Zoho (a proxy's page): trying again will not turn it into an answer.
      if (parsed === undefined) throw new PermanentError(`Zoho CRM ${what}: HTTP ${response.status} with no JSON`);
      return { status: response.status, body: parsed as T };
    },
  };
}

function tokenRefused(err: unknown): boolean {
  const refused = refusal(err);
  return refused?.status === 401 && zohoError(refused.body)?.code !== 'OAUTH_SCOPE_MISMATCH';
}
