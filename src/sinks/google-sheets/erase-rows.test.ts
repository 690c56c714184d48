import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../../../test/fakes/google-sheets.js';
import { closedPort } from '../../../test/helpers/server.js';
import type { CallRecord } from '../../record.js';
import { PermanentError, RetryableError } from '../errors.js';
import { sheetsClient } from './client.js';
import { readServiceAccount } from './credentials.js';
import { googleSheetsSink } from './google-sheets.js';
import { serviceAccountTokens } from './token.js';

/**
 * A person's erasure in the `google-sheets` sink (docs/reference.md#erasure), against the fake Sheets API
 * (test/fakes/google-sheets.ts): their rows found by the record id in column A and deleted by one batchUpdate of
 * deleteDimension requests, bottom up; and the fake itself refusing what the real API refuses.
 */

const log = pino({ level: 'silent' });
const EMAIL = 'callhook-writer@acme-calls.iam.gserviceaccount.com';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'acme-calls',
  private_key_id: 'k1',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: EMAIL,
  token_uri: 'https://oauth2.googleapis.com/token',
});

const id = (n: number) => `019a0000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const record = (n: number): CallRecord => ({
  id: id(n),
  hook: 'end-of-call',
  dedup_key: `call_id:c${n}`,
  received_at: '2026-11-21T10:00:00.000Z',
  source: 'webhook',
  revision: 1,
  extra: {},
  problems: [],
  data: { first_name: `Caller ${n}`, phone_number: '+919812345678' },
});
const context = () => ({ attempt: 1, idempotencyKey: 'x:sheet', signal: new AbortController().signal, log });
const eraseContext = () => ({ signal: new AbortController().signal, log });
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('resolved'),
    (err: unknown) => err as Error,
  );

let google: FakeGoogle;
let spreadsheetId: string;
let n = 0;
beforeAll(async () => {
  google = await startFakeGoogle();
  google.trust({ clientEmail: EMAIL, publicKey });
});
afterAll(() => google?.close());
beforeEach(() => {
  spreadsheetId = `erase-${++n}`;
  google.spreadsheet(spreadsheetId, { sheets: ['Sheet1', 'Calls'], sharedWith: [EMAIL] });
});

const open = (options: Record<string, unknown> = {}) =>
  googleSheetsSink.open(
    googleSheetsSink.options.parse({
      credentials: KEY,
      spreadsheet_id: spreadsheetId,
      token_url: google.tokenUrl,
      api_url: google.url,
      columns: { first_name: '{{ first_name }}' },
      ...options,
    }),
    { name: 'sheet', dataDir: '/nonexistent', log },
  );
const during = async (act: () => Promise<unknown>) => {
  const from = google.requests.length;
  await act();
  return google.requests.slice(from);
};
const columnA = (sheet = 'Sheet1') => google.cells(spreadsheetId, sheet).map((row) => row[0]);

describe('google-sheets sink erase', () => {
  it('deletes the rows of the erased records in one batchUpdate, bottom up, leaves the others, and counts rows', async () => {
    const sink = await open();
    for (let i = 1; i <= 6; i++) await sink.deliver(record(i), context());
    // A row the team typed under the calls stays.
    google.cells(spreadsheetId, 'Sheet1').push(['their own note']);

    const requests = await during(async () => {
      expect(await sink.erase!([id(2), id(3), id(5), id(99)], eraseContext())).toBe(3);
    });

    expect(columnA()).toEqual(['callhook_id', id(1), id(4), id(6), 'their own note']);
    expect(google.cells(spreadsheetId, 'Sheet1')[2]).toEqual([id(4), 'Caller 4']);
    const batch = requests.filter((r) => r.endpoint === 'batchUpdate');
    expect(batch).toHaveLength(1);
    // Rows 3-4 and 6 of the sheet (0-based 2-3 and 5), on the first tab, whose id is 0.
    expect(JSON.parse(batch[0]!.body)).toEqual({
      requests: [
        { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 5, endIndex: 6 } } },
        { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 2, endIndex: 4 } } },
      ],
    });
    // Deliveries go on, below the rows that are left, and a kept call is still recognised.
    await sink.deliver(record(7), context());
    expect(await sink.deliver(record(4), context())).toEqual({
      note: 'the call is already in row 3 of "Sheet1"; nothing appended',
    });
    expect(columnA()).toEqual(['callhook_id', id(1), id(4), id(6), 'their own note', id(7)]);
  });

  it('deletes on the configured tab, by its id, and leaves the other tabs alone', async () => {
    const sink = await open({ sheet: 'Calls' });
    const first = await open();
    for (const i of [1, 2]) {
      await sink.deliver(record(i), context());
      await first.deliver(record(i), context());
    }
    expect(await sink.erase!([id(1)], eraseContext())).toBe(1);
    expect(columnA('Calls')).toEqual(['callhook_id', id(2)]);
    expect(columnA()).toEqual(['callhook_id', id(1), id(2)]);
  });

  it('reads column A and sends nothing more when none of the records is there', async () => {
    const sink = await open();
    await sink.deliver(record(1), context());
    const requests = await during(async () => {
      expect(await sink.erase!([id(2)], eraseContext())).toBe(0);
      expect(await sink.erase!([], eraseContext())).toBe(0);
    });
    expect(requests.map((r) => r.endpoint)).toEqual(['read']);
    expect(columnA()).toEqual(['callhook_id', id(1)]);
  });

  it('fails as a delivery does when the API is unavailable, rate-limited or unreachable: retryable, nothing deleted', async () => {
    const sink = await open();
    await sink.deliver(record(1), context());
    google.failNext('unavailable', { on: 'read' });
    const down = await failure(sink.erase!([id(1)], eraseContext()));
    expect(down).toBeInstanceOf(RetryableError);
    expect(down.message).toBe('Google Sheets: UNAVAILABLE The service is currently unavailable.');
    google.failNext('rate-limit', { on: 'batchUpdate' });
    const limited = await failure(sink.erase!([id(1)], eraseContext()));
    expect(limited).toBeInstanceOf(RetryableError);
    expect(limited.message).toMatch(/^Google Sheets quota: RESOURCE_EXHAUSTED/);
    expect(columnA()).toEqual(['callhook_id', id(1)]);
    expect(await sink.erase!([id(1)], eraseContext())).toBe(1);

    const unreachable = await open({ api_url: `http://127.0.0.1:${await closedPort()}` });
    expect(await failure(unreachable.erase!([id(1)], eraseContext()))).toBeInstanceOf(RetryableError);
  });
});

describe('the fake Sheets API’s batchUpdate, as strict as the real one', () => {
  const client = () =>
    sheetsClient({
      apiUrl: google.url,
      tokens: serviceAccountTokens({ account: readServiceAccount(KEY), tokenUrl: google.tokenUrl }),
      spreadsheetId,
      sheet: 'Sheet1',
      clientEmail: EMAIL,
    });
  const signal = new AbortController().signal;
  const batch = (requests: unknown) =>
    client().request<unknown>('POST', `/v4/spreadsheets/${spreadsheetId}:batchUpdate`, {
      body: { requests },
      signal,
    });
  const rows = (sheetId: number, startIndex: number, endIndex: number) => ({
    deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex, endIndex } },
  });
  const fill = (count: number) => {
    const cells = google.cells(spreadsheetId, 'Sheet1');
    for (let i = 0; i < count; i++) cells.push([`r${i}`]);
  };

  it('applies the requests in order and replies with one empty reply each', async () => {
    fill(5);
    expect(await batch([rows(0, 3, 4), rows(0, 0, 1)])).toEqual({ spreadsheetId, replies: [{}, {}] });
    expect(columnA()).toEqual(['r1', 'r2', 'r4']);
  });

  it('refuses the whole batch, applying none of it, for one request that is not valid', async () => {
    fill(3);
    const refusal = async (requests: unknown) => {
      const err = await failure(batch(requests));
      expect(err).toBeInstanceOf(PermanentError);
      return err.message;
    };
    expect(await refusal([rows(0, 0, 1), rows(7, 0, 1)])).toBe(
      'Google Sheets: INVALID_ARGUMENT Invalid requests[1].deleteDimension: No grid with id: 7',
    );
    expect(await refusal([rows(0, 0, 1), rows(0, 998, 1000)])).toBe(
      "Google Sheets: INVALID_ARGUMENT Invalid requests[1].deleteDimension: Cannot delete a row that doesn't exist. Tried to delete row index 999 but there are only 999 rows.",
    );
    expect(await refusal([rows(0, 0, 1000)])).toBe(
      "Google Sheets: INVALID_ARGUMENT Invalid requests[0].deleteDimension: You can't delete all the rows on the sheet.",
    );
    expect(await refusal([{ deleteDimension: { range: { sheetId: 0, startIndex: 0, endIndex: 1 } } }])).toMatch(
      /dimension/,
    );
    expect(await refusal([{ deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', start: 0 } } }])).toMatch(
      /Unknown name "start" at 'requests\[0\]\.delete_dimension\.range'/,
    );
    expect(await refusal([])).toBe('Google Sheets: INVALID_ARGUMENT Must specify at least one request.');
    expect(columnA()).toEqual(['r0', 'r1', 'r2']);
  });

  it('answers spreadsheets.get with the fields the mask asks for, and refuses a mask naming what it does not have', async () => {
    const get = (fields: string) =>
      client().request<unknown>('GET', `/v4/spreadsheets/${spreadsheetId}?${new URLSearchParams({ fields })}`, {
        signal,
      });
    expect(await get('sheets.properties(sheetId,title)')).toEqual({
      sheets: [
        { properties: { sheetId: 0, title: 'Sheet1' } },
        { properties: { sheetId: 1_000_000_007, title: 'Calls' } },
      ],
    });
    expect(await failure(get('sheets.properties(sheetid)'))).toBeInstanceOf(PermanentError);
    expect(await failure(get('properties, sheets.properties'))).toBeInstanceOf(PermanentError);
  });
});
