import { PermanentError, RetryableError } from '../errors.js';
import { sendRequest } from '../shared/http-response.js';
import { reworded } from '../shared/refusal.js';
import { googleApiError } from './errors.js';
import { SHEETS_SCOPE, type TokenSource } from './token.js';

/**
 * One Sheets API v4 request with the service account's access token (`Authorization: Bearer`), the reply's JSON or an
 * error the worker classifies, in Google's words with what the operator must do (docs/reference.md#sinks-and-delivery,
 * docs/reference.md#queues-and-databases and docs/reference.md#crm-sinks).
 */

export type Method = 'GET' | 'POST' | 'PUT';

export interface SheetsClient {
  request<T>(method: Method, path: string, { body, signal }: { body?: unknown; signal: AbortSignal }): Promise<T>;
}

export interface ClientOptions {
  apiUrl: string;
  tokens: TokenSource;
  /** For messages: which spreadsheet, which tab, and whom it must be shared with. */
  spreadsheetId: string;
  sheet: string;
  clientEmail: string;
}

export function sheetsClient({ apiUrl, tokens, spreadsheetId, sheet, clientEmail }: ClientOptions): SheetsClient {
  const base = apiUrl.replace(/\/+$/, '');
  const send = async (
    method: Method,
    path: string,
    body: unknown,
    signal: AbortSignal,
    token: string,
  ): Promise<Response> => {
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'user-agent': 'callhook',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return sendRequest(
      `${base}${path}`,
      { method, headers, body: body === undefined ? undefined : JSON.stringify(body) },
      { signal },
    );
  };
  return {
    async request<T>(
      method: Method,
      path: string,
      { body, signal }: { body?: unknown; signal: AbortSignal },
    ): Promise<T> {
      let token = await tokens.token(signal);
      let response: Response;
      try {
        response = await send(method, path, body, signal, token);
      } catch (err) {
        if (!isStatus(err, 401)) throw sheetsError(err, { spreadsheetId, sheet, clientEmail });
        // A token revoked or expired early: one new token, once (docs/reference.md#crm-sinks); a second 401 is
        // permanent.
        tokens.invalidate(token);
        token = await tokens.token(signal);
        try {
          response = await send(method, path, body, signal, token);
        } catch (again) {
          throw sheetsError(again, { spreadsheetId, sheet, clientEmail });
        }
      }
      const text = await response.text();
      try {
        return JSON.parse(text) as T;
      } catch {
        // A 2xx that is not JSON is not the Sheets API (a proxy's page): api_url is wrong, and will stay wrong.
        throw new PermanentError(`the Sheets API (api_url) answered ${method} with ${response.status} and no JSON`);
      }
    },
  };
}

function isStatus(err: unknown, status: number): boolean {
  return (err instanceof RetryableError || err instanceof PermanentError) && err.status === status;
}

/**
 * Quota errors by ErrorInfo reason (https://cloud.google.com/apis/design/errors#error_info); Sheets v4 sends them with
 * 429.
 */
const RATE_LIMIT_REASONS = new Set(['RATE_LIMIT_EXCEEDED', 'USER_RATE_LIMIT_EXCEEDED', 'RESOURCE_EXHAUSTED']);

/**
 * Google's error object (`{"error":{"code","message","status"}}`) read into a message that says what to do. The Sheets
 * API's usage limits (https://developers.google.com/workspace/sheets/api/limits) answer 429 `RESOURCE_EXHAUSTED`,
 * usually without `Retry-After`: the whole sink then waits its back-off step (docs/reference.md#queues-and-databases).
 * A quota error that came as 403 (older Google APIs did) is a rate limit too, not a refusal.
 */
export function sheetsError(
  err: unknown,
  { spreadsheetId, sheet, clientEmail }: Omit<ClientOptions, 'apiUrl' | 'tokens'>,
): unknown {
  if (!(err instanceof RetryableError || err instanceof PermanentError)) return err;
  const google = googleApiError(err);
  if (!google) return err;
  const said = [google.status, google.message].filter(Boolean).join(' ');
  const rateLimited =
    err.status === 429 || google.status === 'RESOURCE_EXHAUSTED' || RATE_LIMIT_REASONS.has(google.reason ?? '');
  if (rateLimited) {
    const retryAfterMs = err instanceof RetryableError ? err.retryAfterMs : undefined;
    return new RetryableError(`Google Sheets quota: ${said}`, { status: 429, retryAfterMs, cause: err });
  }
  if (err.status === 401) return reworded(err, `Google Sheets refused the service account's access token: ${said}`);
  if (err.status === 403 && google.reason === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT') {
    return reworded(err, `Google Sheets: ${said} (the token must carry the ${SHEETS_SCOPE} scope)`);
  }
  if (err.status === 403 && google.status === 'PERMISSION_DENIED' && !google.reason) {
    return reworded(
      err,
      `Google Sheets: ${said}: share the spreadsheet ${spreadsheetId} with ${clientEmail} as an Editor`,
    );
  }
  if (err.status === 404)
    return reworded(
      err,
      `Google Sheets: ${said}: no spreadsheet has the id ${spreadsheetId} (spreadsheet_id is the part of its URL after /d/)`,
    );
  if (err.status === 400 && /unable to parse range/i.test(google.message ?? '')) {
    return reworded(err, `Google Sheets: ${said}: the spreadsheet has no sheet (tab) named ${JSON.stringify(sheet)}`);
  }
  return reworded(err, `Google Sheets: ${said || `HTTP ${err.status ?? ''}`.trim()}`);
}
