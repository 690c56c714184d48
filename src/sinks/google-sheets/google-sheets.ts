import { z } from 'zod';
import type { CallRecord } from '../../record.js';
import { maskFetchedTokens } from '../shared/fetched-tokens.js';
import { serially } from '../shared/serially.js';
import { serviceUrl } from '../shared/service-url.js';
import { compileMap, mapSchema } from '../shared/template.js';
import { defineSinkType } from '../sink.js';
import { cell, defaultColumns, ID_HEADER } from './cells.js';
import { sheetsClient } from './client.js';
import { credentialsSchema, keySecrets } from './credentials.js';
import { eraseRows } from './erase-rows.js';
import { type Sheet, writeRow } from './row.js';
import { serviceAccountTokens } from './token.js';

/**
 * One row per call in a Google Sheets spreadsheet (docs/reference.md#crm-sinks), written by a service account: its key
 * signs the token grant, and the spreadsheet is shared with its address.
 */

export const TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const API_URL = 'https://sheets.googleapis.com';

/**
 * "A unique spreadsheetId value, containing letters, numbers, hyphens, or underscores"
 * (https://developers.google.com/workspace/sheets/api/guides/concepts).
 */
const SPREADSHEET_ID =
  "spreadsheet_id must be the id in the spreadsheet's URL, docs.google.com/spreadsheets/d/<spreadsheet_id>/edit";

const columns = mapSchema.superRefine((map, ctx) => {
  if (map.targets.includes(ID_HEADER))
    ctx.addIssue({
      code: 'custom',
      path: [ID_HEADER],
      message: `the first column is always ${ID_HEADER}, the record's id; columns are the ones after it`,
    });
});

export const googleSheetsSink = defineSinkType({
  type: 'google-sheets',
  defaults: {
    // One delivery reads column A and makes one write (the header row rides in the same append): one read and one
    // write request. The Sheets API allows 60 of each per minute per user per project, the service account being the
    // user (https://developers.google.com/workspace/sheets/api/limits); 50 leaves room for the one repeated request
    // after a refused token and for the account's other work.
    rate: { max: 50, per: '1m' },
    // Rows are appended in the order calls are delivered, and only one delivery at a time may find the sheet empty.
    concurrency: 1,
  },
  secretOptions: ['credentials'],
  options: z.strictObject({
    credentials: credentialsSchema,
    spreadsheet_id: z.string({ error: SPREADSHEET_ID }).regex(/^[A-Za-z0-9_-]+$/, { error: SPREADSHEET_ID }),
    // A tab's title: Google Sheets refuses a longer one than 100 characters when a tab is renamed.
    sheet: z.string().min(1, { error: 'sheet must name a sheet (tab) of the spreadsheet' }).max(100).default('Sheet1'),
    columns: columns.optional(),
    token_url: serviceUrl('token_url').default(TOKEN_URL),
    api_url: serviceUrl('api_url').default(API_URL),
  }),
  open(
    {
      credentials: account,
      spreadsheet_id: spreadsheetId,
      sheet,
      columns: given,
      token_url: tokenUrl,
      api_url: apiUrl,
    },
    context,
  ) {
    // The private key came from a file the option names, or from inside its JSON text: masked as an option's own
    // secret is, wherever callhook writes text (docs/reference.md#secrets).
    for (const secret of keySecrets(account.privateKeyPem)) context.secret?.(secret);
    const tokens = serviceAccountTokens({ account, tokenUrl, onToken: maskFetchedTokens(context.secret) });
    const client = sheetsClient({ apiUrl, tokens, spreadsheetId, sheet, clientEmail: account.clientEmail });
    const map = given ?? compileMap(defaultColumns(context.hooks, context.name));
    const target: Sheet = {
      client,
      spreadsheetId,
      sheet,
      headers: [ID_HEADER, ...map.targets],
      cells(record: CallRecord) {
        const values = map.render(record);
        return [cell(record.id), ...map.targets.map((header) => cell(values[header]))];
      },
    };
    const inTurn = serially();
    return {
      // With a concurrency set higher, deliveries still write one at a time: two at once could both find the sheet
      // empty and write two header rows.
      deliver: (record, { signal }) => inTurn(() => writeRow(target, record, signal)),
      // In turn with the deliveries too: an edited call's delivery rewrites its row by the number it read, which
      // an erasure deleting rows above it in between would make another call's row.
      erase: (recordIds, { signal }) => inTurn(() => eraseRows(target, recordIds, signal)),
      async close() {
        tokens.close();
      },
    };
  },
});

/** The registry loads a type by its folder's name and takes its default export (registry.ts). */
export default googleSheetsSink;
