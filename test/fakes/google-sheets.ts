import { type KeyObject, randomBytes, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { columnLetters } from '../../src/sinks/google-sheets/a1.js';
import { JWT_BEARER, SHEETS_SCOPE } from '../../src/sinks/google-sheets/token.js';
import { batchUpdate, type FakeSheet, type Outcome, spreadsheetResource } from './google-sheets-batch.js';

/**
 * A local stand-in for Google's token endpoint and the Sheets API v4 methods the sink calls (`spreadsheets.values`
 * get, append and update; `spreadsheets.get` and `spreadsheets.batchUpdate` with `deleteDimension` on rows, in
 * google-sheets-batch.ts), for tests only: the JWT grant checked with the service account's public key, the bearer
 * token checked on every request, bodies and query parameters checked against the documented shapes, replies and
 * errors in Google's shapes (https://cloud.google.com/apis/design/errors), and cells read as USER_ENTERED reads
 * typed text, so a test sees a phone kept as text or turned into a number.
 */

/** What a cell holds: text, a number, a boolean, a date, or a formula (which these tests never want). */
export type StoredCell = string | number | boolean | { date: string } | { formula: string };

export type Failure = 'rate-limit' | 'unavailable' | 'lose-reply' | 'quote-token';
export type Endpoint = 'token' | 'read' | 'append' | 'update' | 'spreadsheet' | 'batchUpdate';

export interface FakeRequest {
  endpoint: Endpoint | 'other';
  method: string;
  /** Decoded: `'My Sheet'!A:A`. */
  range?: string;
  query: Record<string, string>;
  authorization?: string;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface FakeGoogle {
  /** The `api_url`. */
  url: string;
  /** The `token_url`, and the audience the grant must name. */
  tokenUrl: string;
  requests: FakeRequest[];
  /** The claims of every grant the token endpoint accepted. */
  grants: Record<string, unknown>[];
  /** A service account whose grants are signed with the private key of `publicKey`. */
  trust(account: { clientEmail: string; publicKey: KeyObject }): void;
  /** Every later grant of the account is refused with `invalid_grant`, as for a disabled or deleted account. */
  disable(clientEmail: string, description?: string): void;
  /** A spreadsheet shared with these accounts, its tabs empty. */
  spreadsheet(id: string, options?: { sheets?: string[]; sharedWith?: string[] }): void;
  /** A tab's cells, row by row, for assertions; rows may be set directly to start from a sheet with data. */
  cells(id: string, sheet: string): StoredCell[][];
  /** Tokens issued from now on carry this scope, whatever the grant asked for (a key restricted elsewhere). */
  grantScope(scope: string | undefined): void;
  /** The `expires_in` of the tokens issued from now on (Google's: 3599 seconds). */
  tokenLifetime(seconds: number): void;
  /** Every token issued so far stops working (401), as when it expires or is revoked. */
  revokeTokens(): void;
  /** The next `times` requests to `on` (any endpoint when not given) fail this way. */
  failNext(failure: Failure, options?: { on?: Endpoint; times?: number; retryAfter?: string }): void;
  close(): Promise<void>;
}

interface Spreadsheet {
  sheets: Map<string, StoredCell[][]>;
  /** Each tab's id and grid size, by title. */
  grids: Map<string, { sheetId: number; rowCount: number }>;
  sharedWith: Set<string>;
}

/** A new tab's grid: 1,000 rows of 26 columns. */
const NEW_ROWS = 1000;
const NEW_COLUMNS = 26;

const RANGE = /^(?:'((?:[^']|'')+)'|([^'!]+))!([A-Z]+)(\d+)?(?::([A-Z]+)(\d+)?)?$/;
const VALUES_PATH = /^\/v4\/spreadsheets\/([^/]+)\/values\/([^/]+?)(:append)?$/;
const SPREADSHEET_PATH = /^\/v4\/spreadsheets\/([^/:]+)(:batchUpdate)?$/;

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const accounts = new Map<string, { publicKey: KeyObject; disabled?: string }>();
  const tokens = new Map<string, { clientEmail: string; scope: string; revoked: boolean }>();
  const spreadsheets = new Map<string, Spreadsheet>();
  const failures: { failure: Failure; on?: Endpoint; retryAfter?: string }[] = [];
  const requests: FakeRequest[] = [];
  const grants: Record<string, unknown>[] = [];
  let base = '';
  let grantedScope: string | undefined;
  let lifetime = 3599;

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers }).end(JSON.stringify(body));
  const apiError = (
    res: ServerResponse,
    code: number,
    status: string,
    message: string,
    details?: unknown[],
    headers?: Record<string, string>,
  ) => json(res, code, { error: { code, message, status, ...(details && { details }) } }, headers);
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    json(res, status, { error, error_description: description });

  const grant = (res: ServerResponse, req: IncomingMessage, body: string) => {
    if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? ''))
      return oauthError(res, 400, 'invalid_request', 'Bad Request');
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== JWT_BEARER)
      return oauthError(res, 400, 'unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    const parts = (form.get('assertion') ?? '').split('.');
    if (parts.length !== 3) return oauthError(res, 400, 'invalid_grant', 'Invalid JWT: malformed');
    let header: Record<string, unknown> | undefined;
    let claims: Record<string, unknown> | undefined;
    try {
      [header, claims] = parts
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
    } catch {
      return oauthError(res, 400, 'invalid_grant', 'Invalid JWT: malformed');
    }
    if (header?.alg !== 'RS256' || header.typ !== 'JWT')
      return oauthError(res, 400, 'invalid_grant', 'Invalid JWT: unsupported header');
    const account = accounts.get(String(claims?.iss));
    if (!account || account.disabled !== undefined)
      return oauthError(res, 400, 'invalid_grant', account?.disabled ?? 'Invalid grant: account not found');
    if (
      !verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), account.publicKey, Buffer.from(parts[2]!, 'base64url'))
    ) {
      return oauthError(res, 400, 'invalid_grant', 'Invalid JWT Signature.');
    }
    if (claims!.aud !== `${base}/token`)
      return oauthError(
        res,
        400,
        'invalid_grant',
        `Invalid JWT: Failed audience check. The right audience is ${base}/token`,
      );
    const now = Math.floor(Date.now() / 1000);
    const [iat, exp] = [Number(claims!.iat), Number(claims!.exp)];
    if (!(iat <= now + 60 && exp > now && exp - iat <= 3600)) {
      return oauthError(
        res,
        400,
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    if (typeof claims!.scope !== 'string' || claims!.scope === '')
      return oauthError(res, 400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    grants.push(claims!);
    const token = `ya29.fake-${randomBytes(24).toString('base64url')}`;
    tokens.set(token, { clientEmail: String(claims!.iss), scope: grantedScope ?? claims!.scope, revoked: false });
    return json(res, 200, { access_token: token, expires_in: lifetime, token_type: 'Bearer' });
  };

  /** The spreadsheet when the request's token may use it; otherwise the error is sent and undefined returned. */
  const authorized = (res: ServerResponse, req: IncomingMessage, id: string): Spreadsheet | undefined => {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const token = auth === undefined ? undefined : tokens.get(auth);
    if (!token || token.revoked) {
      apiError(
        res,
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
        undefined,
        { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' },
      );
      return undefined;
    }
    if (!token.scope.split(' ').includes(SHEETS_SCOPE)) {
      apiError(res, 403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
          domain: 'googleapis.com',
        },
      ]);
      return undefined;
    }
    const spreadsheet = spreadsheets.get(id);
    if (!spreadsheet) {
      apiError(res, 404, 'NOT_FOUND', 'Requested entity was not found.');
      return undefined;
    }
    if (!spreadsheet.sharedWith.has(token.clientEmail)) {
      apiError(res, 403, 'PERMISSION_DENIED', 'The caller does not have permission');
      return undefined;
    }
    return spreadsheet;
  };

  /** The tabs as google-sheets-batch.ts sees them: the same cell arrays, which it changes in place. */
  const tabs = (spreadsheet: Spreadsheet): FakeSheet[] =>
    [...spreadsheet.sheets].map(([title, cells]) => {
      const grid = spreadsheet.grids.get(title)!;
      return {
        title,
        sheetId: grid.sheetId,
        rowCount: Math.max(grid.rowCount, cells.length),
        columnCount: NEW_COLUMNS,
        cells,
      };
    });
  const reply = (res: ServerResponse, outcome: Outcome) =>
    outcome.ok ? json(res, 200, outcome.body) : apiError(res, outcome.code, outcome.status, outcome.message);

  /** `spreadsheets.get` and `spreadsheets.batchUpdate`. */
  const spreadsheetMethod = (res: ServerResponse, req: IncomingMessage, request: FakeRequest, id: string) => {
    const found = authorized(res, req, id);
    if (!found) return;
    if (request.endpoint === 'spreadsheet') {
      if (req.method !== 'GET') return apiError(res, 404, 'NOT_FOUND', 'Not Found');
      return reply(res, spreadsheetResource(id, tabs(found), request.query.fields));
    }
    if (req.method !== 'POST') return apiError(res, 404, 'NOT_FOUND', 'Not Found');
    const sheets = tabs(found);
    const outcome = batchUpdate(id, sheets, request.body);
    for (const sheet of sheets) found.grids.get(sheet.title)!.rowCount = sheet.rowCount;
    return reply(res, outcome);
  };

  const values = (res: ServerResponse, req: IncomingMessage, request: FakeRequest, id: string, append: boolean) => {
    const spreadsheet = authorized(res, req, id);
    if (!spreadsheet) return;
    const range = RANGE.exec(request.range ?? '');
    const sheet = range && spreadsheet.sheets.get(sheetTitle(range));
    if (!range || !sheet) return apiError(res, 400, 'INVALID_ARGUMENT', `Unable to parse range: ${request.range}`);
    const [c1, r1, c2, r2] = [
      column(range[3]!),
      range[4] ? Number(range[4]) : 1,
      column(range[5] ?? range[3]!),
      range[6] ? Number(range[6]) : undefined,
    ];

    if (req.method === 'GET' && !append) {
      const dimension = request.query.majorDimension ?? 'ROWS';
      if (!['ROWS', 'COLUMNS'].includes(dimension))
        return apiError(
          res,
          400,
          'INVALID_ARGUMENT',
          `Invalid value at 'major_dimension' (type.googleapis.com/google.apps.sheets.v4.Dimension), "${dimension}"`,
        );
      const last = r2 ?? sheet.length;
      const rows = Array.from({ length: Math.max(0, last - r1 + 1) }, (_, i) =>
        Array.from({ length: c2 - c1 + 1 }, (_, j) => formatted(sheet[r1 - 1 + i]?.[c1 - 1 + j])),
      );
      const grid =
        dimension === 'ROWS' ? rows : Array.from({ length: c2 - c1 + 1 }, (_, j) => rows.map((row) => row[j]!));
      const trimmed = trimTrailing(grid.map(trimTrailing<string>));
      return json(res, 200, {
        range: request.range,
        majorDimension: dimension,
        ...(trimmed.length > 0 && { values: trimmed }),
      });
    }
    const input = request.query.valueInputOption;
    if (input === undefined)
      return apiError(res, 400, 'INVALID_ARGUMENT', "'valueInputOption' is required but not specified");
    if (!['RAW', 'USER_ENTERED'].includes(input))
      return apiError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Invalid value at 'value_input_option' (type.googleapis.com/google.apps.sheets.v4.ValueInputOption), "${input}"`,
      );
    const body = valueRange(request.body);
    if (typeof body === 'string') return apiError(res, 400, 'INVALID_ARGUMENT', body);
    const read = (value: unknown) => (input === 'RAW' ? (value as StoredCell) : userEntered(value));
    if (append) {
      if (req.method !== 'POST') return apiError(res, 404, 'NOT_FOUND', 'Not Found');
      const insert = request.query.insertDataOption ?? 'OVERWRITE';
      if (!['OVERWRITE', 'INSERT_ROWS'].includes(insert))
        return apiError(res, 400, 'INVALID_ARGUMENT', `Invalid value at 'insert_data_option', "${insert}"`);
      // The table is found from the range's first cell down; rows are added after its last row.
      const first = sheet.length + 1;
      for (const [i, row] of body.values.entries()) sheet[first - 1 + i] = row.map(read);
      // INSERT_ROWS inserts the rows it writes into the grid; OVERWRITE writes into the empty rows below the table.
      const grid = spreadsheet.grids.get(sheetTitle(range))!;
      grid.rowCount =
        insert === 'INSERT_ROWS' ? grid.rowCount + body.values.length : Math.max(grid.rowCount, sheet.length);
      const width = Math.max(...body.values.map((row) => row.length));
      return json(res, 200, {
        spreadsheetId: id,
        ...(first > 1 && {
          tableRange: `${range[1] !== undefined ? `'${range[1]}'` : range[2]}!A1:${columnLetters(width)}${first - 1}`,
        }),
        updates: {
          spreadsheetId: id,
          updatedRange: `${request.range!.split('!')[0]}!A${first}:${columnLetters(width)}${first + body.values.length - 1}`,
          updatedRows: body.values.length,
          updatedColumns: width,
          updatedCells: body.values.flat().length,
        },
      });
    }
    if (req.method !== 'PUT') return apiError(res, 404, 'NOT_FOUND', 'Not Found');
    const tooWide = body.values.find((row) => row.length > c2 - c1 + 1);
    if (tooWide)
      return apiError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Requested writing within range [${request.range}], but tried writing to column [${columnLetters(c1 + tooWide.length - 1)}]`,
      );
    if (r2 !== undefined && body.values.length > r2 - r1 + 1)
      return apiError(
        res,
        400,
        'INVALID_ARGUMENT',
        `Requested writing within range [${request.range}], but tried writing to row [${r1 + body.values.length - 1}]`,
      );
    body.values.forEach((row, i) => {
      const target = (sheet[r1 - 1 + i] ??= []);
      for (const [j, value] of row.entries()) target[c1 - 1 + j] = read(value);
    });
    return json(res, 200, {
      spreadsheetId: id,
      updatedRange: request.range,
      updatedRows: body.values.length,
      updatedColumns: Math.max(...body.values.map((r) => r.length)),
      updatedCells: body.values.flat().length,
    });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      const path = VALUES_PATH.exec(url.pathname);
      const whole = SPREADSHEET_PATH.exec(url.pathname);
      const endpoint: FakeRequest['endpoint'] =
        url.pathname === '/token'
          ? 'token'
          : whole
            ? whole[2]
              ? 'batchUpdate'
              : 'spreadsheet'
            : !path
              ? 'other'
              : path[3]
                ? 'append'
                : req.method === 'GET'
                  ? 'read'
                  : 'update';
      const request: FakeRequest = {
        endpoint,
        method: req.method ?? '',
        range: path ? decodeURIComponent(path[2]!) : undefined,
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(request);
      const failAt = failures.findIndex((f) => f.on === undefined || f.on === endpoint);
      const failure = failAt === -1 ? undefined : failures.splice(failAt, 1)[0]!;
      if (failure?.failure === 'rate-limit') {
        return apiError(
          res,
          429,
          'RESOURCE_EXHAUSTED',
          "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user' of service 'sheets.googleapis.com' for consumer 'project_number:123456789'.",
          [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'RATE_LIMIT_EXCEEDED',
              domain: 'googleapis.com',
              metadata: { quota_limit: 'WriteRequestsPerMinutePerUser', service: 'sheets.googleapis.com' },
            },
          ],
          failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter },
        );
      }
      if (failure?.failure === 'unavailable')
        return apiError(res, 503, 'UNAVAILABLE', 'The service is currently unavailable.');
      // A front end that quotes the request's credentials in its error, as some proxies and gateways do.
      if (failure?.failure === 'quote-token')
        return apiError(res, 400, 'INVALID_ARGUMENT', `Request with ${request.authorization} refused`);
      if (failure?.failure === 'lose-reply') {
        // The work is done, then the connection dies before the reply: the client cannot tell it happened.
        const sink = { writeHead: () => sink, end: () => req.socket.destroy() } as unknown as ServerResponse;
        return route(sink, req, request, path);
      }
      route(res, req, request, path);
    });
  });
  const route = (res: ServerResponse, req: IncomingMessage, request: FakeRequest, path: RegExpExecArray | null) => {
    if (request.endpoint === 'token' && req.method === 'POST') return grant(res, req, request.body);
    if (path) return values(res, req, request, decodeURIComponent(path[1]!), path[3] !== undefined);
    const whole = SPREADSHEET_PATH.exec(new URL(req.url ?? '/', base).pathname);
    if (whole) return spreadsheetMethod(res, req, request, decodeURIComponent(whole[1]!));
    return apiError(res, 404, 'NOT_FOUND', 'Not Found');
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    tokenUrl: `${base}/token`,
    requests,
    grants,
    trust: ({ clientEmail, publicKey }) => void accounts.set(clientEmail, { publicKey }),
    disable(clientEmail, description = 'Invalid grant: account not found') {
      const account = accounts.get(clientEmail);
      if (account) account.disabled = description;
    },
    spreadsheet(id, { sheets = ['Sheet1'], sharedWith = [] } = {}) {
      spreadsheets.set(id, {
        sheets: new Map(sheets.map((title) => [title, []])),
        // The first tab's id is 0, as in a new spreadsheet; a tab added later gets a large number of Google's choosing.
        grids: new Map(
          sheets.map((title, i) => [title, { sheetId: i === 0 ? 0 : 1_000_000_007 * i, rowCount: NEW_ROWS }]),
        ),
        sharedWith: new Set(sharedWith),
      });
    },
    cells: (id, sheet) => spreadsheets.get(id)!.sheets.get(sheet)!,
    tokenLifetime: (seconds) => void (lifetime = seconds),
    grantScope: (scope) => void (grantedScope = scope),
    revokeTokens: () => {
      for (const token of tokens.values()) token.revoked = true;
    },
    failNext(failure, { on, times = 1, retryAfter } = {}) {
      for (let i = 0; i < times; i++) failures.push({ failure, on, retryAfter });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The tab a RANGE match names: quoted (with '' for ') or bare. */
function sheetTitle(range: RegExpExecArray): string {
  return range[1] !== undefined ? range[1].replaceAll("''", "'") : range[2]!;
}

function column(letters: string): number {
  return [...letters].reduce((n, ch) => n * 26 + ch.charCodeAt(0) - 64, 0);
}

/**
 * A ValueRange body (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets.values), or
 * Google's message for what is wrong.
 */
function valueRange(text: string): { values: unknown[][] } | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `Invalid JSON payload received. Unexpected token.\n${text.slice(0, 40)}`;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'Invalid JSON payload received. Expected an object.';
  const unknown = Object.keys(body).find((key) => !['range', 'majorDimension', 'values'].includes(key));
  if (unknown) return `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`;
  const { values } = body as { values?: unknown };
  if (!Array.isArray(values) || !values.every(Array.isArray))
    return "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue)";
  const bad = (values as unknown[][])
    .flat()
    .find((v) => v !== null && !['string', 'number', 'boolean'].includes(typeof v));
  if (bad !== undefined)
    return `Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue), ${JSON.stringify(bad)}`;
  return { values: values as unknown[][] };
}

/** What Sheets makes of a value typed into a cell, in the few ways these tests look at. */
function userEntered(value: unknown): StoredCell {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return value as number | boolean;
  if (value.startsWith("'")) return value.slice(1);
  if (/^\s*[+-]?\s*[\d][\d\s,]*(\.\d+)?%?\s*$/.test(value)) return Number(value.replace(/[\s,%]/g, ''));
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return { date: value };
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  if (/^[=+\-@]/.test(value)) return { formula: value };
  return value;
}

/** FORMATTED_VALUE, the default render of `values.get`. */
function formatted(cell: StoredCell | undefined): string {
  if (cell === undefined) return '';
  if (typeof cell === 'boolean') return cell ? 'TRUE' : 'FALSE';
  if (typeof cell === 'object') return 'date' in cell ? cell.date : '#ERROR!';
  return String(cell);
}

function trimTrailing<T>(list: T[]): T[] {
  const empty = (v: unknown) => v === '' || (Array.isArray(v) && v.length === 0);
  let end = list.length;
  while (end > 0 && empty(list[end - 1])) end--;
  return list.slice(0, end);
}
