import type { CallRecord } from '../../record.js';
import type { DeliveryResult } from '../sink.js';
import { rowCells, sheetRange } from './a1.js';
import { type Cell, ID_HEADER } from './cells.js';
import type { SheetsClient } from './client.js';

/**
 * One row per call (docs/reference.md#crm-sinks), written at most once: the sheet's first column is read for the
 * record's id before anything is written, so a repeated delivery (a retry after a lost reply, a redeliver, a crash)
 * appends nothing; an edited call (a higher revision) rewrites the row it finds; on an empty sheet the header row goes
 * first, in the same append as the call's row.
 */

export interface Sheet {
  client: SheetsClient;
  spreadsheetId: string;
  /** The tab's title. */
  sheet: string;
  /** `callhook_id`, then the headers of the columns after it. */
  headers: readonly string[];
  /** The record's cells under `headers`, its id first. */
  cells(record: CallRecord): Cell[];
}

/** `values.get` and `values.update` reply with a ValueRange / UpdateValuesResponse; `values.append` with this. */
interface AppendValuesResponse {
  updates?: { updatedRange?: string; updatedRows?: number };
}

export async function writeRow(target: Sheet, record: CallRecord, signal: AbortSignal): Promise<DeliveryResult> {
  const ids = await firstColumn(target, signal);
  const at = ids.findIndex((id) => id.trim() === record.id);
  if (at !== -1) {
    const row = at + 1;
    // A record as received (revision 1) is what the row already holds: a repeat. An edit rewrites the row's own
    // columns, leaving any the team added to its right as they are.
    if (record.revision <= 1)
      return { note: `the call is already in row ${row} of ${JSON.stringify(target.sheet)}; nothing appended` };
    await target.client.request(
      'PUT',
      `${valuesPath(target, rowCells(row, target.headers.length))}?valueInputOption=USER_ENTERED`,
      {
        body: { values: [target.cells(record)] },
        signal,
      },
    );
    return { note: `revision ${record.revision} rewrote row ${row} of ${JSON.stringify(target.sheet)}` };
  }
  // Nothing in column A at all: a new sheet, which gets its header row. A sheet with rows of its own and an empty
  // column A is not taken for one (its rows are the team's); the call is appended below them.
  const rows: Cell[][] = ids.length === 0 ? [[...target.headers], target.cells(record)] : [target.cells(record)];
  const reply = await target.client.request<AppendValuesResponse>(
    'POST',
    `${valuesPath(target, 'A1')}:append?valueInputOption=USER_ENTERED&insertDataOption=INSERT_ROWS`,
    { body: { values: rows }, signal },
  );
  const where = reply.updates?.updatedRange;
  return {
    note: `${ids.length === 0 ? `wrote the header row (${ID_HEADER}, …) and ` : ''}appended the call${where ? ` at ${where}` : ''}`,
  };
}

/**
 * `GET …/values/'Sheet'!A:A?majorDimension=COLUMNS`: column A as one list, formatted as the sheet shows it (the
 * default FORMATTED_VALUE, which drops the `'` an id was written with). Empty trailing cells are left out, and no
 * `values` at all means the column is empty (ValueRange: "empty trailing rows and columns will not be included").
 */
export async function firstColumn(target: Sheet, signal: AbortSignal): Promise<string[]> {
  const reply = await target.client.request<{ values?: unknown[][] }>(
    'GET',
    `${valuesPath(target, 'A:A')}?majorDimension=COLUMNS`,
    { signal },
  );
  return (reply.values?.[0] ?? []).map((value) => (value === null || value === undefined ? '' : String(value)));
}

/**
 * `/v4/spreadsheets/{spreadsheetId}/values/{range}`: the range percent-encoded as one path segment, so a sheet named
 * `Calls / 2026` or `Q1?` stays inside it
 * (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets.values/get).
 */
function valuesPath(target: Sheet, cells: string): string {
  return `/v4/spreadsheets/${encodeURIComponent(target.spreadsheetId)}/values/${encodeURIComponent(sheetRange(target.sheet, cells))}`;
}
