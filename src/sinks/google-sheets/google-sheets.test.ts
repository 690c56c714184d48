import { generateKeyPairSync, verify } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../../../test/fakes/google-sheets.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import type { HookSummary } from '../sink.js';
import { googleSheetsSink } from './google-sheets.js';

/**
 * The sink against a local fake of Google's token endpoint and the Sheets API (test/fakes/google-sheets.ts): the header
 * row, one row per call, a repeat and a lost reply that append nothing, an edit that rewrites its row, cells kept
 * as the text they are, and Google's errors read into permanent, retryable and rate-limited ones.
 */

const log = pino({ level: 'silent' });
const EMAIL = 'callhook-writer@acme-calls.iam.gserviceaccount.com';
/** A throwaway key pair, as a service account's JSON key holds it. */
function serviceAccount(clientEmail = EMAIL) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const key = JSON.stringify({
    type: 'service_account',
    project_id: 'acme-calls',
    private_key_id: 'k1',
    private_key: pem,
    client_email: clientEmail,
    token_uri: 'https://oauth2.googleapis.com/token',
  });
  return { clientEmail, publicKey, pem, key };
}
const account = serviceAccount();

let n = 0;
const record = (data: CallRecord['data'] = {}, rest: Partial<CallRecord> = {}): CallRecord => ({
  id: `019a0000-0000-7000-8000-${String(++n).padStart(12, '0')}`,
  hook: 'end-of-call',
  dedup_key: `call_id:c${n}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems: [],
  data: { first_name: 'Asha', phone_number: '+919812345678', call_outcome: 'order placed', order_total: 499, ...data },
  ...rest,
});
const context = () => ({ attempt: 1, idempotencyKey: 'x:sheet', signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );
const HOOKS: HookSummary[] = [
  {
    name: 'end-of-call',
    parameters: ['first_name', 'phone_number', 'call_outcome', 'order_total'],
    sinks: ['sheet', 'log'],
  },
  { name: 'elsewhere', parameters: ['not_here'], sinks: ['log'] },
  { name: 'callback', parameters: ['phone_number', 'city'], sinks: ['sheet'] },
];

let google: FakeGoogle;
let sheetId: string;
beforeAll(async () => {
  google = await startFakeGoogle();
  google.trust(account);
});
afterAll(() => google?.close());
beforeEach(() => {
  sheetId = `sheet-${++n}`;
  google.spreadsheet(sheetId, { sheets: ['Sheet1', "Jon's Calls"], sharedWith: [EMAIL] });
  google.grantScope(undefined);
});

/** `hooks: null`: a context that knows no hooks. */
const open = (options: Record<string, unknown> = {}, { hooks = HOOKS }: { hooks?: HookSummary[] | null } = {}) =>
  googleSheetsSink.open(
    googleSheetsSink.options.parse({
      credentials: account.key,
      spreadsheet_id: sheetId,
      token_url: google.tokenUrl,
      api_url: google.url,
      ...options,
    }),
    { name: 'sheet', dataDir: '/nonexistent', log, hooks: hooks ?? undefined },
  );
/** The requests the fake gets while `act` runs. */
const during = async (act: () => Promise<unknown>) => {
  const from = google.requests.length;
  await act();
  return google.requests.slice(from);
};

describe('google-sheets sink', () => {
  it("writes the header row on an empty sheet, in the order of the hooks' declared parameters, then one row per call", async () => {
    const sink = await open();
    const first = record();
    const second = record({ first_name: 'Ravi', city: 'Pune' }, { hook: 'callback' });
    expect(await sink.deliver(first, context())).toEqual({
      note: "wrote the header row (callhook_id, …) and appended the call at 'Sheet1'!A1:H2",
    });
    await sink.deliver(second, context());
    expect(google.cells(sheetId, 'Sheet1')).toEqual([
      ['callhook_id', 'received_at', 'hook', 'first_name', 'phone_number', 'call_outcome', 'order_total', 'city'],
      [first.id, '2026-11-21T10:00:00.000Z', 'end-of-call', 'Asha', '+919812345678', 'order placed', 499, ''],
      [second.id, '2026-11-21T10:00:00.000Z', 'callback', 'Ravi', '+919812345678', 'order placed', 499, 'Pune'],
    ]);
    const appends = google.requests.filter((r) => r.endpoint === 'append');
    expect(appends).toHaveLength(2);
    expect(appends[0]).toMatchObject({
      method: 'POST',
      range: "'Sheet1'!A1",
      query: { valueInputOption: 'USER_ENTERED', insertDataOption: 'INSERT_ROWS' },
    });
    expect(JSON.parse(appends[1]!.body)).toEqual({
      values: [
        [
          `'${second.id}`,
          "'2026-11-21T10:00:00.000Z",
          'callback',
          'Ravi',
          "'+919812345678",
          'order placed',
          499,
          'Pune',
        ],
      ],
    });
  });

  it('appends nothing for a repeated delivery, and says where the call already is', async () => {
    const sink = await open();
    const call = record();
    await sink.deliver(call, context());
    expect(await sink.deliver(call, context())).toEqual({
      note: 'the call is already in row 2 of "Sheet1"; nothing appended',
    });
    expect(google.cells(sheetId, 'Sheet1')).toHaveLength(2);
  });

  it('writes no second row when the retry follows an append whose reply was lost', async () => {
    const sink = await open();
    const call = record();
    google.failNext('lose-reply', { on: 'append' });
    const lost = await failure(sink.deliver(call, context()));
    expect(lost).toBeInstanceOf(RetryableError);
    expect(lost.message).toMatch(/^network error/);
    // The fake did append before the connection died.
    expect(google.cells(sheetId, 'Sheet1').map((row) => row[0])).toEqual(['callhook_id', call.id]);
    expect(await sink.deliver(call, context())).toEqual({
      note: 'the call is already in row 2 of "Sheet1"; nothing appended',
    });
    expect(google.cells(sheetId, 'Sheet1')).toHaveLength(2);
  });

  it('rewrites the row of an edited call (a higher revision) in place, leaving the columns the team added', async () => {
    const sink = await open();
    const call = record();
    await sink.deliver(record(), context());
    await sink.deliver(call, context());
    google.cells(sheetId, 'Sheet1')[2]![8] = 'called back';
    const edited = { ...call, revision: 2, data: { ...call.data, call_outcome: 'order cancelled', order_total: 0 } };
    expect(await sink.deliver(edited, context())).toEqual({ note: 'revision 2 rewrote row 3 of "Sheet1"' });
    expect(google.cells(sheetId, 'Sheet1')).toHaveLength(3);
    expect(google.cells(sheetId, 'Sheet1')[2]).toEqual([
      call.id,
      '2026-11-21T10:00:00.000Z',
      'end-of-call',
      'Asha',
      '+919812345678',
      'order cancelled',
      0,
      '',
      'called back',
    ]);
    expect(
      google.requests.filter((r) => r.endpoint === 'update').map((r) => [r.method, r.range, r.query.valueInputOption]),
    ).toEqual([['PUT', "'Sheet1'!A3:H3", 'USER_ENTERED']]);
    // Delivered again, the edit rewrites the same row with the same values, and still adds none.
    await sink.deliver(edited, context());
    expect(google.cells(sheetId, 'Sheet1')).toHaveLength(3);
  });

  it('keeps formula-like text, phones and other number-like text as text; numbers stay numbers, a missing value is an empty cell', async () => {
    const sink = await open({
      columns: {
        a: '{{ a }}',
        b: '{{ b }}',
        c: '{{ c }}',
        d: '{{ d }}',
        e: '{{ e }}',
        f: '{{ f }}',
        g: '{{ g }}',
        h: '{{ h }}',
        i: '{{ i }}',
        j: '{{ j }}',
        k: '{{ k }}',
        l: '{{ l }}',
        m: 'note: {{ m }}',
        n: '{{ nothing }}',
      },
    });
    const said = {
      a: '=HYPERLINK("https://evil.example","win")',
      b: '+919812345678',
      c: '-1 star',
      d: '@SUM(A1:A9)',
      e: '0042',
      f: 'TRUE',
      g: "'quoted",
      h: '2026-11-21',
      i: 'Nov 21',
      j: '₹499',
      k: 42.5,
      l: true,
      m: '=1+1',
    };
    const requests = await during(() => sink.deliver(record(said), context()));
    const [, row] = google.cells(sheetId, 'Sheet1');
    expect(row!.slice(1)).toEqual([
      '=HYPERLINK("https://evil.example","win")',
      '+919812345678',
      '-1 star',
      '@SUM(A1:A9)',
      '0042',
      'TRUE',
      "'quoted",
      '2026-11-21',
      'Nov 21',
      '₹499',
      42.5,
      true,
      'note: =1+1',
      '',
    ]);
    const sent = JSON.parse(requests.find((r) => r.endpoint === 'append')!.body).values[1];
    expect(sent.slice(1, 5)).toEqual([
      '\'=HYPERLINK("https://evil.example","win")',
      "'+919812345678",
      "'-1 star",
      "'@SUM(A1:A9)",
    ]);
    expect(sent.at(-1)).toBe('');
  });

  it('takes the columns it is given, after the id, and writes nothing in place of what a call lacks', async () => {
    const sink = await open({
      sheet: "Jon's Calls",
      columns: { Name: '{{ first_name }} {{ last_name }}', Phone: '{{ phone_number }}', Total: '{{ order_total }}' },
    });
    const requests = await during(async () => {
      await sink.deliver(record({ last_name: 'Verma' }), context());
      await sink.deliver(record({ phone_number: '', order_total: '' }), context());
    });
    const rows = google.cells(sheetId, "Jon's Calls");
    expect(rows[0]).toEqual(['callhook_id', 'Name', 'Phone', 'Total']);
    expect(rows.slice(1).map((row) => row.slice(1))).toEqual([
      ['Asha Verma', '+919812345678', 499],
      ['Asha ', '', ''],
    ]);
    // The sheet's name is quoted, its apostrophe doubled, and the range sent as one encoded path segment.
    expect(requests.filter((r) => r.endpoint === 'read').map((r) => r.range)).toEqual([
      "'Jon''s Calls'!A:A",
      "'Jon''s Calls'!A:A",
    ]);
  });

  it('writes no header row on a sheet that has rows already', async () => {
    const cells = google.cells(sheetId, 'Sheet1');
    cells.push(['callhook_id', 'when'], ['older-call', 'yesterday']);
    await (await open({ columns: { when: '{{ received_at }}' } })).deliver(record(), context());
    expect(cells.map((row) => row[0])).toEqual(['callhook_id', 'older-call', expect.stringMatching(/^019a/)]);
  });

  it("signs an RS256 grant with the service account key: verified with its public key, with Google's claims and the token URL as audience", async () => {
    const before = Math.floor(Date.now() / 1000);
    const sink = await open();
    const requests = await during(() => sink.deliver(record(), context()));
    const body = new URLSearchParams(requests.find((r) => r.endpoint === 'token')!.body);
    expect(body.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [header, claims, signature] = body.get('assertion')!.split('.');
    const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    expect(decode(header!)).toEqual({ alg: 'RS256', typ: 'JWT' });
    const claimed = decode(claims!);
    expect(claimed).toEqual({
      iss: EMAIL,
      scope: 'https://www.googleapis.com/auth/spreadsheets',
      aud: google.tokenUrl,
      iat: expect.any(Number),
      exp: claimed.iat + 3600,
    });
    expect(claimed.iat).toBeGreaterThanOrEqual(before);
    expect(
      verify('sha256', Buffer.from(`${header}.${claims}`), account.publicKey, Buffer.from(signature!, 'base64url')),
    ).toBe(true);
    expect(
      verify(
        'sha256',
        Buffer.from(`${header}.${claims}`),
        serviceAccount().publicKey,
        Buffer.from(signature!, 'base64url'),
      ),
    ).toBe(false);
    // Every Sheets request carried the token the grant gave.
    const issued = requests.filter((r) => r.endpoint !== 'token').map((r) => r.authorization);
    expect(new Set(issued).size).toBe(1);
    expect(issued[0]).toMatch(/^Bearer ya29\.fake-/);
  });

  it('keeps the token for the next deliveries, and gets a new one once when the API refuses it', async () => {
    const sink = await open();
    const tokenRequests = () => google.requests.filter((r) => r.endpoint === 'token').length;
    const before = tokenRequests();
    await Promise.all([
      sink.deliver(record(), context()),
      sink.deliver(record(), context()),
      sink.deliver(record(), context()),
    ]);
    expect(tokenRequests() - before).toBe(1);
    google.revokeTokens();
    await sink.deliver(record(), context());
    expect(tokenRequests() - before).toBe(2);
    expect(google.cells(sheetId, 'Sheet1')).toHaveLength(5);
  });

  it("ends at once, in Google's words, when the key was deleted or the account disabled", async () => {
    const other = serviceAccount('deleted-key@acme-calls.iam.gserviceaccount.com');
    google.trust({ clientEmail: other.clientEmail, publicKey: serviceAccount().publicKey });
    const deletedKey = await failure((await open({ credentials: other.key })).deliver(record(), context()));
    expect(deletedKey).toBeInstanceOf(PermanentError);
    expect(deletedKey).toMatchObject({
      status: 400,
      message:
        'Google refused a token for the service account deleted-key@acme-calls.iam.gserviceaccount.com: invalid_grant: Invalid JWT Signature.',
    });

    const disabled = serviceAccount('disabled@acme-calls.iam.gserviceaccount.com');
    google.trust(disabled);
    google.disable(disabled.clientEmail);
    const err = await failure((await open({ credentials: disabled.key })).deliver(record(), context()));
    expect(err).toBeInstanceOf(PermanentError);
    expect(err.message).toBe(
      'Google refused a token for the service account disabled@acme-calls.iam.gserviceaccount.com: invalid_grant: Invalid grant: account not found',
    );
  });

  it('ends at once when the spreadsheet is not shared with the account, does not exist, has no such tab, or the token lacks the scope', async () => {
    google.spreadsheet('not-shared', { sharedWith: ['someone@else.example'] });
    const notShared = await failure((await open({ spreadsheet_id: 'not-shared' })).deliver(record(), context()));
    expect(notShared).toBeInstanceOf(PermanentError);
    expect(notShared).toMatchObject({
      status: 403,
      message: `Google Sheets: PERMISSION_DENIED The caller does not have permission: share the spreadsheet not-shared with ${EMAIL} as an Editor`,
    });

    const missing = await failure((await open({ spreadsheet_id: 'no-such-sheet' })).deliver(record(), context()));
    expect(missing).toBeInstanceOf(PermanentError);
    expect(missing).toMatchObject({
      status: 404,
      message:
        'Google Sheets: NOT_FOUND Requested entity was not found.: no spreadsheet has the id no-such-sheet (spreadsheet_id is the part of its URL after /d/)',
    });

    const noTab = await failure((await open({ sheet: 'Calls 2026' })).deliver(record(), context()));
    expect(noTab).toBeInstanceOf(PermanentError);
    expect(noTab).toMatchObject({
      status: 400,
      message:
        'Google Sheets: INVALID_ARGUMENT Unable to parse range: \'Calls 2026\'!A:A: the spreadsheet has no sheet (tab) named "Calls 2026"',
    });

    google.grantScope('https://www.googleapis.com/auth/drive.readonly');
    const scope = await failure((await open()).deliver(record(), context()));
    expect(scope).toBeInstanceOf(PermanentError);
    expect(scope).toMatchObject({
      status: 403,
      message:
        'Google Sheets: PERMISSION_DENIED Request had insufficient authentication scopes. (the token must carry the https://www.googleapis.com/auth/spreadsheets scope)',
    });
    expect(google.cells(sheetId, 'Sheet1')).toEqual([]);
  });

  it('is rate limited by a 429, waiting its Retry-After when there is one, else the back-off step; 5xx and network errors are retried', async () => {
    const sink = await open();
    google.failNext('rate-limit', { on: 'append', retryAfter: '7' });
    const limited = await failure(sink.deliver(record(), context()));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(limited.message).toMatch(
      /^Google Sheets quota: RESOURCE_EXHAUSTED Quota exceeded for quota metric 'Write requests'/,
    );
    google.failNext('rate-limit', { on: 'read' });
    expect(await failure(sink.deliver(record(), context()))).toMatchObject({ status: 429, retryAfterMs: undefined });
    google.failNext('unavailable', { on: 'read' });
    expect(await failure(sink.deliver(record(), context()))).toMatchObject({
      name: 'RetryableError',
      status: 503,
      message: 'Google Sheets: UNAVAILABLE The service is currently unavailable.',
    });
    google.failNext('unavailable', { on: 'token' });
    expect(await failure((await open()).deliver(record(), context()))).toMatchObject({
      name: 'RetryableError',
      status: 503,
    });
    expect(google.cells(sheetId, 'Sheet1')).toEqual([]);
  });

  it('starts with the received time and the hook when no hook is known, and never a column twice', async () => {
    await (await open({}, { hooks: null })).deliver(record(), context());
    expect(google.cells(sheetId, 'Sheet1')[0]).toEqual(['callhook_id', 'received_at', 'hook']);
    const sink = await open(
      {},
      { hooks: [{ name: 'odd', parameters: ['hook', 'callhook_id', '__proto__', 'city'], sinks: ['sheet'] }] },
    );
    google.spreadsheet(sheetId, { sharedWith: [EMAIL] });
    await sink.deliver(record({ __proto__: 'proto', city: 'Pune' }), context());
    expect(google.cells(sheetId, 'Sheet1')[0]).toEqual(['callhook_id', 'received_at', 'hook', '__proto__', 'city']);
  });
});

describe('google-sheets options', () => {
  const parse = (options: Record<string, unknown>) =>
    googleSheetsSink.options.safeParse({ credentials: account.key, spreadsheet_id: 'abc_DEF-123', ...options });
  const issue = (options: Record<string, unknown>) => {
    const first = parse(options).error?.issues[0];
    return (
      first && {
        path: first.code === 'unrecognized_keys' ? [...first.path, ...first.keys] : first.path,
        message: first.message,
      }
    );
  };

  it("defaults to Sheet1, Google's token endpoint and API, and keeps the key's address", () => {
    const parsed = parse({});
    expect(parsed.success).toBe(true);
    expect(parsed.data).toMatchObject({
      sheet: 'Sheet1',
      token_url: 'https://oauth2.googleapis.com/token',
      api_url: 'https://sheets.googleapis.com',
      credentials: { clientEmail: EMAIL },
    });
    expect(googleSheetsSink.defaults).toEqual({ rate: { max: 50, per: '1m' }, concurrency: 1 });
    expect(googleSheetsSink.secretOptions).toEqual(['credentials']);
  });

  it("refuses a key that is missing, unreadable or not a service account's, naming the option and never quoting it", () => {
    expect(issue({ credentials: undefined })).toEqual({
      path: ['credentials'],
      message: "credentials must be the path of a service account's JSON key, or its JSON text",
    });
    expect(issue({ credentials: '/nonexistent/key.json' })).toEqual({
      path: ['credentials'],
      message: "cannot read the key file (ENOENT); give the path of the service account's JSON key, or its JSON text",
    });
    expect(issue({ credentials: '{"type": "service_account", ' })?.message).toBe(
      "the key is not JSON: give the service account's JSON key as Google Cloud console downloads it",
    );
    expect(issue({ credentials: JSON.stringify({ type: 'authorized_user', client_id: 'x' }) })?.message).toMatch(
      /^not a service account's key \(its type is "authorized_user"\)/,
    );
    const broken = JSON.stringify({ ...JSON.parse(account.key), private_key: account.pem.slice(0, 400) });
    const brokenIssue = issue({ credentials: broken });
    expect(brokenIssue).toEqual({ path: ['credentials'], message: "the key's private_key is not a PEM private key" });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(issue({ credentials: JSON.stringify({ ...JSON.parse(account.key), private_key: ec }) })?.message).toBe(
      "the key's private_key is not an RSA key, which RS256 needs",
    );
    expect(
      issue({ credentials: JSON.stringify({ ...JSON.parse(account.key), client_email: undefined }) })?.message,
    ).toBe('the key has no client_email');
  });

  it('refuses columns naming an unknown root or the id column, a spreadsheet URL for its id, plain http to another host, and unknown options', () => {
    expect(issue({ columns: { Phone: '{{ caller.phone }}' } })).toEqual({
      path: ['columns', 'Phone'],
      message: expect.stringMatching(/unknown root "caller"/),
    });
    expect(issue({ columns: { callhook_id: '{{ id }}' } })).toEqual({
      path: ['columns', 'callhook_id'],
      message: "the first column is always callhook_id, the record's id; columns are the ones after it",
    });
    expect(issue({ spreadsheet_id: 'https://docs.google.com/spreadsheets/d/abc/edit' })).toEqual({
      path: ['spreadsheet_id'],
      message:
        "spreadsheet_id must be the id in the spreadsheet's URL, docs.google.com/spreadsheets/d/<spreadsheet_id>/edit",
    });
    expect(issue({ spreadsheet_id: undefined })?.path).toEqual(['spreadsheet_id']);
    expect(issue({ token_url: 'http://tokens.example.com/token' })).toEqual({
      path: ['token_url'],
      message: 'token_url must be https:// (plain http only to localhost)',
    });
    expect(issue({ api_url: 'ftp://sheets.example.com' })?.path).toEqual(['api_url']);
    expect(issue({ sheet: '' })?.path).toEqual(['sheet']);
    expect(issue({ range: 'A:Z' })).toEqual({ path: ['range'], message: expect.any(String) });
  });
});
