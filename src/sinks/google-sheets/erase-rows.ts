import { PermanentError } from '../errors.js';
import { firstColumn, type Sheet } from './row.js';

/**
 * The `google-sheets` sink's part of a person's erasure (docs/reference.md#erasure): the rows of their records, found
 * by the record id in column A as a delivery finds a repeat (row.ts), deleted by one `spreadsheets.batchUpdate` of
 * `deleteDimension` requests (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets/request#DeleteDimensionRequest).
 * Requests in a batch are applied in order and all or none ("If any request is not valid, no requests will be
 * applied"), so the runs of rows go from the bottom up: each deletion moves only rows below it, already deleted. The
 * sink runs it in turn with its deliveries, so none of them appends between the read and the deletion; a person
 * editing the sheet in that second can still shift rows under it, which the API gives no way to guard against.
 */

export async function eraseRows(target: Sheet, recordIds: readonly string[], signal: AbortSignal): Promise<number> {
  const ids = new Set(recordIds);
  if (ids.size === 0) return 0;
  // Index i of column A is row i + 1, whose 0-based index deleteDimension takes is i. The header row holds
  // callhook_id, never a record id.
  const rows = (await firstColumn(target, signal)).flatMap((value, index) => (ids.has(value.trim()) ? [index] : []));
  if (rows.length === 0) return 0;
  const sheetId = await sheetIdOf(target, signal);
  const requests = runs(rows)
    .reverse()
    .map(([startIndex, endIndex]) => ({
      deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex, endIndex } },
    }));
  await target.client.request('POST', `/v4/spreadsheets/${encodeURIComponent(target.spreadsheetId)}:batchUpdate`, {
    body: { requests },
    signal,
  });
  return rows.length;
}

/**
 * The tab's numeric id, which deleteDimension takes where the values methods take its title: `spreadsheets.get` with a
 * field mask, so the reply holds the tabs' ids and titles and no cells.
 */
async function sheetIdOf(target: Sheet, signal: AbortSignal): Promise<number> {
  const query = new URLSearchParams({ fields: 'sheets.properties(sheetId,title)' });
  const reply = await target.client.request<{ sheets?: { properties?: { sheetId?: number; title?: string } }[] }>(
    'GET',
    `/v4/spreadsheets/${encodeURIComponent(target.spreadsheetId)}?${query}`,
    { signal },
  );
  const found = reply.sheets?.find((sheet) => sheet.properties?.title === target.sheet)?.properties;
  // Column A was just read from it: the tab was renamed or deleted in between.
  if (found === undefined)
    throw new PermanentError(
      `Google Sheets: the spreadsheet has no sheet (tab) named ${JSON.stringify(target.sheet)} any more`,
    );
  // The API writes a first tab's id 0 in its properties; proto3 JSON may leave a 0 out, as a GridRange does.
  return found.sheetId ?? 0;
}

/** Sorted row indexes as runs `[start, end)`: 3, 4, 5, 9 → [3, 6], [9, 10]. */
function runs(rows: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    if (last && last[1] === row) last[1] = row + 1;
    else out.push([row, row + 1]);
  }
  return out;
}
