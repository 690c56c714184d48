import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Zoho Accounts' token endpoint and the Zoho CRM v6 requests the sink makes, on 127.0.0.1, for
 * tests only. It checks what Zoho checks (the grant's form fields, the `Zoho-oauthtoken` header, the bodies' shapes,
 * field API names) and answers in Zoho's documented shapes, holding contacts, leads and notes in memory. It can be
 * told to fail: a 429 with Zoho's headers, a 401 or 403, a reply lost after the work is done, a throttled grant.
 */

type Row = Record<string, unknown>;
export type FakeModule = 'Contacts' | 'Leads';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** When it arrived (Date.now()). */
  at: number;
}

export interface Failure {
  /** Which requests fail: by default any request to the CRM API (not the token endpoint). */
  match?: (request: FakeRequest) => boolean;
  status?: number;
  /** Or made when the request arrives, for a header that names a time (X-RATELIMIT-RESET). */
  headers?: Record<string, string> | ((request: FakeRequest) => Record<string, string>);
  /** Or made from the request (a reply that echoes what it was sent). */
  body?: unknown;
  /** Do the work, then destroy the socket: the reply is lost. */
  lost?: boolean;
}

export interface FakeZohoCrm {
  /** The CRM API's base, `api_url`. */
  url: string;
  /** `token_url`. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  records: Record<FakeModule, Row[]>;
  notes: Row[];
  requests: FakeRequest[];
  /** Token requests received, granted or not. */
  tokenRequests(): number;
  /** Every access token granted, expired or not. */
  granted: string[];
  /** Lifetime of the tokens granted from now on, in seconds (Zoho's `expires_in`). */
  expiresIn: number;
  /** Every token granted so far stops working at once, as when Zoho expires it early or a 31st replaces it. */
  expireTokens(): void;
  /** The refresh token is revoked: the grant answers `invalid_code`. */
  revokeRefreshToken(): void;
  /** The next token requests answer Zoho's throttle ("Access Denied"). */
  throttleTokens(times: number): void;
  /** The next `times` matching requests fail as `failure` says. */
  failNext(times: number, failure: Failure): void;
  /** A record as Zoho would hold it, typed by a person: returns its id. */
  add(module: FakeModule, fields: Row, modifiedTime?: string): string;
  notesOf(parentId: string): Row[];
  close(): Promise<void>;
}

/** The fields of Contacts and Leads a test may write; anything else is INVALID_DATA, as an unknown API name is. */
const FIELDS = new Set([
  'First_Name',
  'Last_Name',
  'Email',
  'Phone',
  'Mobile',
  'Description',
  'Lead_Source',
  'Company',
  'Title',
]);
/**
 * System-defined duplicate check fields of Contacts and Leads (upsert-records.html); no field is marked unique here.
 */
const UNIQUE = new Set(['Email']);

const error = (code: string, message: string, details: Row = {}) => ({ code, details, message, status: 'error' });
const recordError = (code: string, message: string, details: Row = {}) => ({ data: [error(code, message, details)] });

export async function startFakeZohoCrm(): Promise<FakeZohoCrm> {
  const clientId = '1000.CALLHOOKTESTCLIENT';
  const clientSecret = `secret-${randomBytes(12).toString('hex')}`;
  const refreshToken = `1000.${randomBytes(16).toString('hex')}.${randomBytes(16).toString('hex')}`;
  const records: Record<FakeModule, Row[]> = { Contacts: [], Leads: [] };
  const notes: Row[] = [];
  const requests: FakeRequest[] = [];
  const tokens = new Set<string>();
  const failures: { times: number; failure: Failure }[] = [];
  let revoked = false;
  let throttled = 0;
  let nextId = 4150868000000500001n;
  const newId = () => String(nextId++);
  // Zoho writes times with the org's offset and no milliseconds; a clock that moves on each write keeps them in order.
  let clock = Date.parse('2026-11-21T10:00:00Z');
  const zohoTime = (ms = (clock += 1000)) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

  const fake: FakeZohoCrm = {
    url: '',
    tokenUrl: '',
    clientId,
    clientSecret,
    refreshToken,
    records,
    notes,
    requests,
    expiresIn: 3600,
    granted: [],
    tokenRequests: () => requests.filter((r) => r.path === '/oauth/v2/token').length,
    expireTokens: () => tokens.clear(),
    revokeRefreshToken: () => void (revoked = true),
    throttleTokens: (times) => void (throttled = times),
    failNext: (times, failure) => void failures.push({ times, failure }),
    add(module, fields, modifiedTime) {
      const id = newId();
      records[module].push({ id, ...fields, Created_Time: zohoTime(), Modified_Time: modifiedTime ?? zohoTime() });
      return id;
    },
    notesOf: (parentId) => notes.filter((n) => (n.Parent_Id as { id: string }).id === parentId),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  /** Answers one request: [status, body] (no body for a 204). */
  function handle(request: FakeRequest): [number, unknown] {
    const { method, path, query, headers, body } = request;
    if (path === '/oauth/v2/token') return token(method, body as URLSearchParams | undefined, headers);
    if (!path.startsWith('/crm/v6/'))
      return [404, error('INVALID_URL_PATTERN', 'Please check if the URL trying to access is a correct one')];
    const auth = /^Zoho-oauthtoken (\S+)$/.exec(headers.authorization ?? '');
    if (!auth) return [401, error('AUTHENTICATION_FAILURE', 'Authentication failed')];
    if (!tokens.has(auth[1]!)) return [401, error('INVALID_TOKEN', 'invalid oauth token')];
    if (body === INVALID_JSON) return [400, error('INVALID_DATA', 'body is not a valid JSON')];
    const parts = path.slice('/crm/v6/'.length).split('/').map(decodeURIComponent);
    const [first, second, third] = parts;
    if (first === 'Notes') {
      if (method === 'POST' && parts.length === 1) return createNote(body);
      if (method === 'PUT' && parts.length === 2) return updateNote(second!, body);
    }
    if (first === 'Contacts' || first === 'Leads') {
      const module: FakeModule = first;
      if (method === 'POST' && parts.length === 2 && second === 'upsert') return upsert(module, body);
      if (method === 'GET' && parts.length === 2 && second === 'search') return search(module, query);
      if (method === 'POST' && parts.length === 1) return insert(module, body);
      if (method === 'PUT' && parts.length === 1) return update(module, body);
      if (method === 'GET' && parts.length === 3 && third === 'Notes') return listNotes(module, second!, query);
    }
    return [404, error('INVALID_URL_PATTERN', 'Please check if the URL trying to access is a correct one')];
  }

  /**
   * https://www.zoho.com/crm/developer/docs/api/v6/refresh.html; refused grants answer 200 with `error`, as Zoho does.
   */
  function token(method: string, form: URLSearchParams | undefined, headers: IncomingHttpHeaders): [number, unknown] {
    if (method !== 'POST' || !String(headers['content-type']).startsWith('application/x-www-form-urlencoded') || !form)
      return [400, { error: 'invalid_request' }];
    if (throttled > 0) {
      throttled--;
      return [
        400,
        {
          error_description: 'You have made too many requests continuously. Please try again after some time.',
          error: 'Access Denied',
          status: 'failure',
        },
      ];
    }
    if (form.get('grant_type') !== 'refresh_token') return [200, { error: 'unsupported_grant_type' }];
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret)
      return [200, { error: 'invalid_client' }];
    if (form.get('refresh_token') !== refreshToken || revoked) return [200, { error: 'invalid_code' }];
    const access = `1000.${randomBytes(16).toString('hex')}.${randomBytes(16).toString('hex')}`;
    tokens.add(access);
    fake.granted.push(access);
    return [
      200,
      {
        access_token: access,
        scope: 'ZohoCRM.modules.ALL',
        api_domain: fake.url,
        token_type: 'Bearer',
        expires_in: fake.expiresIn,
      },
    ];
  }

  /** `{ data: [one object] }`, every key a known field API name: else Zoho's 400 (insert-records.html). */
  function oneRecord(body: unknown, allowed: Set<string>): Row | [number, unknown] {
    const data = (body as { data?: unknown } | null)?.data;
    if (
      !Array.isArray(data) ||
      data.length !== 1 ||
      data[0] === null ||
      typeof data[0] !== 'object' ||
      Array.isArray(data[0])
    ) {
      return [400, error('INVALID_DATA', 'invalid data', { expected_data_type: 'jsonarray', api_name: 'data' })];
    }
    const row = data[0] as Row;
    const unknown = Object.keys(row).find((key) => !allowed.has(key));
    if (unknown !== undefined)
      return [
        400,
        recordError('INVALID_DATA', 'invalid data', { api_name: unknown, json_path: `$.data[0].${unknown}` }),
      ];
    return row;
  }

  function write(module: FakeModule, existing: Row | undefined, fields: Row): Row {
    if (existing) {
      Object.assign(existing, fields, { Modified_Time: zohoTime() });
      return existing;
    }
    const row = { id: newId(), ...fields, Created_Time: zohoTime(), Modified_Time: zohoTime() };
    records[module].push(row);
    return row;
  }

  function success(row: Row, action: 'insert' | 'update', extra: Row = {}): unknown {
    const details = {
      Modified_Time: row.Modified_Time,
      Created_Time: row.Created_Time,
      id: row.id,
      Modified_By: { name: 'Test', id: '1' },
      Created_By: { name: 'Test', id: '1' },
    };
    return {
      data: [
        {
          code: 'SUCCESS',
          ...extra,
          details,
          message: action === 'insert' ? 'record added' : 'record updated',
          status: 'success',
        },
      ],
    };
  }

  const missingLastName = [
    400,
    recordError('MANDATORY_NOT_FOUND', 'required field not found', {
      api_name: 'Last_Name',
      json_path: '$.data[0].Last_Name',
    }),
  ] as [number, unknown];

  /** https://www.zoho.com/crm/developer/docs/api/v6/upsert-records.html */
  function upsert(module: FakeModule, body: unknown): [number, unknown] {
    const row = oneRecord(body, FIELDS);
    if (Array.isArray(row)) return row;
    const checks = (body as { duplicate_check_fields?: unknown }).duplicate_check_fields ?? ['Email'];
    if (!Array.isArray(checks) || checks.some((f) => typeof f !== 'string' || !UNIQUE.has(f))) {
      return [400, error('INVALID_DATA', 'the field is not a unique field', { api_name: 'duplicate_check_fields' })];
    }
    const email = typeof row.Email === 'string' ? row.Email.toLowerCase() : undefined;
    const existing =
      email === undefined
        ? undefined
        : records[module].find((r) => typeof r.Email === 'string' && r.Email.toLowerCase() === email);
    if (!existing && !row.Last_Name) return missingLastName;
    const written = write(module, existing, row);
    return [
      existing ? 200 : 201,
      success(written, existing ? 'update' : 'insert', {
        duplicate_field: existing ? 'Email' : null,
        action: existing ? 'update' : 'insert',
      }),
    ];
  }

  function insert(module: FakeModule, body: unknown): [number, unknown] {
    const row = oneRecord(body, FIELDS);
    if (Array.isArray(row)) return row;
    if (!row.Last_Name) return missingLastName;
    return [201, success(write(module, undefined, row), 'insert')];
  }

  function update(module: FakeModule, body: unknown): [number, unknown] {
    const row = oneRecord(body, new Set([...FIELDS, 'id']));
    if (Array.isArray(row)) return row;
    if (typeof row.id !== 'string')
      return [400, recordError('MANDATORY_NOT_FOUND', 'required field not found', { api_name: 'id' })];
    const existing = records[module].find((r) => r.id === row.id);
    if (!existing) return [400, recordError('INVALID_DATA', 'the id given seems to be invalid', { api_name: 'id' })];
    const { id: _, ...fields } = row;
    return [200, success(write(module, existing, fields), 'update')];
  }

  /**
   * https://www.zoho.com/crm/developer/docs/api/v6/search-records.html: `criteria` of `(Field:equals:value)` joined
   * with `or` (at most ten, `(`, `)` and `,` escaped with a backslash), or `email`; 204 when nothing matches.
   */
  function search(module: FakeModule, query: URLSearchParams): [number, unknown] {
    let matches: Row[];
    const criteria = query.get('criteria');
    if (criteria !== null) {
      const condition = String.raw`\((\w+):equals:((?:\\.|[^()\\])+)\)`;
      const whole = new RegExp(String.raw`^\(?${condition}(?:or${condition})*\)?$`);
      if (!whole.test(criteria)) return [400, error('INVALID_QUERY', 'invalid query formed', { reason: 'criteria' })];
      const conditions = [...criteria.matchAll(new RegExp(condition, 'g'))].map(
        (m) => [m[1]!, m[2]!.replace(/\\(.)/g, '$1')] as const,
      );
      if (conditions.length > 10) return [400, error('LIMIT_EXCEEDED', 'the maximum criteria count is 10')];
      const unknown = conditions.find(([field]) => !FIELDS.has(field));
      if (unknown) return [400, error('INVALID_QUERY', 'invalid query formed', { api_name: unknown[0] })];
      matches = records[module].filter((r) => conditions.some(([field, value]) => r[field] === value));
    } else if (query.get('email') !== null) {
      matches = records[module].filter(
        (r) => typeof r.Email === 'string' && r.Email.toLowerCase() === query.get('email')!.toLowerCase(),
      );
    } else {
      return [400, error('REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', { param: 'criteria' })];
    }
    if (matches.length === 0) return [204, undefined];
    return [
      200,
      {
        data: matches.map((r) => ({ ...r })),
        info: { per_page: 200, count: matches.length, page: 1, more_records: false },
      },
    ];
  }

  /** https://www.zoho.com/crm/developer/docs/api/v6/get-related-records.html: `fields` required, 204 when none. */
  function listNotes(module: FakeModule, parentId: string, query: URLSearchParams): [number, unknown] {
    const fields = query.get('fields');
    if (!fields)
      return [400, error('REQUIRED_PARAM_MISSING', 'One of the expected parameter is missing', { param: 'fields' })];
    if (!records[module].some((r) => r.id === parentId))
      return [400, error('INVALID_DATA', 'the related id given seems to be invalid', { api_name: 'id' })];
    const perPage = Number(query.get('per_page') ?? 200);
    const page = Number(query.get('page') ?? 1);
    const all = fake
      .notesOf(parentId)
      .filter((n) => (n.Parent_Id as { module: { api_name: string } }).module.api_name === module);
    const slice = all.slice((page - 1) * perPage, page * perPage);
    if (slice.length === 0) return [204, undefined];
    const wanted = ['id', ...fields.split(',')];
    return [
      200,
      {
        data: slice.map((n) => Object.fromEntries(wanted.map((f) => [f, n[f] ?? null]))),
        info: { per_page: perPage, count: slice.length, page, more_records: page * perPage < all.length },
      },
    ];
  }

  /**
   * https://www.zoho.com/crm/developer/docs/api/v6/create-notes.html: `Parent_Id` is `{ module: { api_name }, id }`.
   */
  function createNote(body: unknown): [number, unknown] {
    const row = oneRecord(body, new Set(['Note_Title', 'Note_Content', 'Parent_Id']));
    if (Array.isArray(row)) return row;
    const parent = row.Parent_Id as { module?: { api_name?: unknown }; id?: unknown } | undefined;
    const module = parent?.module?.api_name;
    if (typeof row.Note_Content !== 'string' || row.Note_Content === '')
      return [400, recordError('MANDATORY_NOT_FOUND', 'required field not found', { api_name: 'Note_Content' })];
    if ((module !== 'Contacts' && module !== 'Leads') || typeof parent?.id !== 'string')
      return [400, recordError('INVALID_DATA', 'invalid data', { api_name: 'Parent_Id' })];
    if (!records[module].some((r) => r.id === parent.id))
      return [400, recordError('INVALID_DATA', 'the related id given seems to be invalid', { api_name: 'Parent_Id' })];
    const note = {
      id: newId(),
      Note_Title: row.Note_Title ?? null,
      Note_Content: row.Note_Content,
      Parent_Id: { module: { api_name: module }, id: parent.id },
      Created_Time: zohoTime(),
      Modified_Time: zohoTime(),
    };
    notes.push(note);
    return [201, success(note, 'insert')];
  }

  /** https://www.zoho.com/crm/developer/docs/api/v6/update-notes.html: only Note_Title and Note_Content. */
  function updateNote(id: string, body: unknown): [number, unknown] {
    const row = oneRecord(body, new Set(['Note_Title', 'Note_Content']));
    if (Array.isArray(row)) return row;
    const note = notes.find((n) => n.id === id);
    if (!note) return [400, recordError('INVALID_DATA', 'the id given seems to be invalid', { api_name: 'id' })];
    Object.assign(note, row, { Modified_Time: zohoTime() });
    return [200, success(note, 'update')];
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = Buffer.concat(chunks).toString('utf8');
      const type = String(req.headers['content-type'] ?? '');
      const body =
        text === ''
          ? undefined
          : type.startsWith('application/x-www-form-urlencoded')
            ? new URLSearchParams(text)
            : parseBody(text);
      const request: FakeRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        at: Date.now(),
      };
      requests.push(request);
      const pending = failures.find(
        (f) => f.times > 0 && (f.failure.match ?? ((r: FakeRequest) => r.path.startsWith('/crm/')))(request),
      );
      if (pending) pending.times--;
      const failure = pending?.failure;
      if (failure && !failure.lost) {
        const headers = typeof failure.headers === 'function' ? failure.headers(request) : failure.headers;
        const body =
          typeof failure.body === 'function' ? (failure.body as (r: FakeRequest) => unknown)(request) : failure.body;
        return reply(res, failure.status ?? 500, body ?? error('INTERNAL_ERROR', 'Internal Server Error'), headers);
      }
      const [status, answer] = handle(request);
      if (failure?.lost) return res.socket?.destroy();
      reply(res, status, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.tokenUrl = `${fake.url}/oauth/v2/token`;
  return fake;
}

const INVALID_JSON = Symbol('invalid JSON');

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return INVALID_JSON;
  }
}

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 204 || body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers }).end(JSON.stringify(body));
}
