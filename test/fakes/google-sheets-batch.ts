/**
 * The fake's `spreadsheets.get` and `spreadsheets.batchUpdate` (test/fakes/google-sheets.ts), as the Sheets API v4
 * reference documents them (https://developers.google.com/workspace/sheets/api/reference/rest/v4/spreadsheets/get,
 * …/spreadsheets/batchUpdate, …/spreadsheets/request#DeleteDimensionRequest): the sheets' properties, with the
 * `fields` partial-response mask applied; and batches of `deleteDimension` requests on rows, validated whole and
 * applied in order, all or nothing, answered with one empty reply per request. The messages for a refused request are
 * the API's own where it is known to say them. Any other kind of request is refused with a 501 that names the fake,
 * so that a test never passes on something the fake does not model.
 */

export interface FakeSheet {
  title: string;
  sheetId: number;
  /** The grid's rows: a new sheet has 1,000 whatever holds data; rows inserted by an append add to them. */
  rowCount: number;
  columnCount: number;
  /** The cells, row by row (the fake's StoredCell[][]); changed in place. */
  cells: unknown[][];
}

/** A reply's body, or Google's error: its HTTP code, its status and its message. */
export type Outcome = { ok: true; body: unknown } | { ok: false; code: number; status: string; message: string };

const refused = (message: string, code = 400, status = 'INVALID_ARGUMENT'): Outcome => ({
  ok: false,
  code,
  status,
  message,
});
const unknownName = (name: string, at: string) =>
  refused(`Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`);

/**
 * `GET /v4/spreadsheets/{id}`: the Spreadsheet resource without grid data, masked by `fields` when given. The first
 * tab's `sheetId` 0 is in its properties, as the API writes it there (where a GridRange leaves a 0 out).
 */
export function spreadsheetResource(id: string, sheets: readonly FakeSheet[], fields: string | undefined): Outcome {
  const resource = {
    spreadsheetId: id,
    properties: { title: `Spreadsheet ${id}`, locale: 'en_US', timeZone: 'Asia/Kolkata' },
    sheets: sheets.map((sheet, index) => ({
      properties: {
        sheetId: sheet.sheetId,
        title: sheet.title,
        index,
        sheetType: 'GRID',
        gridProperties: { rowCount: sheet.rowCount, columnCount: sheet.columnCount },
      },
    })),
    spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${id}/edit`,
  };
  if (fields === undefined) return { ok: true, body: resource };
  const mask = parseMask(fields);
  // The API's own answer to a mask that does not parse (a space after a comma) or names no field of the resource.
  if (mask === undefined || !fits(resource, mask)) return refused('Request contains an invalid argument.');
  return { ok: true, body: applyMask(resource, mask) };
}

/** `POST /v4/spreadsheets/{id}:batchUpdate`. */
export function batchUpdate(id: string, sheets: FakeSheet[], text: string): Outcome {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return refused(`Invalid JSON payload received. Unexpected token.\n${text.slice(0, 40)}`);
  }
  if (!isObject(body)) return refused('Invalid JSON payload received. Expected an object.');
  const known = ['requests', 'includeSpreadsheetInResponse', 'responseRanges', 'responseIncludeGridData'];
  const unknown = Object.keys(body).find((key) => !known.includes(key));
  if (unknown) return refused(`Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
  if (body.includeSpreadsheetInResponse) return notModelled('includeSpreadsheetInResponse');
  const { requests } = body;
  if (requests !== undefined && !Array.isArray(requests))
    return refused("Invalid value at 'requests' (type.googleapis.com/google.apps.sheets.v4.Request)");
  if (!requests || requests.length === 0) return refused('Must specify at least one request.');

  // Applied to a copy, in order, each seeing the sheet as the ones before it left it; kept only if all are valid.
  const copies = sheets.map((sheet) => ({ ...sheet, cells: [...sheet.cells] }));
  for (const [i, request] of requests.entries()) {
    const at = `requests[${i}]`;
    if (!isObject(request))
      return refused(`Invalid value at '${at}' (type.googleapis.com/google.apps.sheets.v4.Request)`);
    const kinds = Object.keys(request);
    if (kinds.length !== 1) return refused(`Invalid ${at}: exactly one kind of request must be set.`);
    const kind = kinds[0]!;
    if (kind !== 'deleteDimension') return notModelled(kind);
    const outcome = deleteDimension(copies, request.deleteDimension, at);
    if (outcome) return outcome;
  }
  for (const [i, sheet] of sheets.entries()) {
    const copy = copies[i]!;
    sheet.cells.splice(0, sheet.cells.length, ...copy.cells);
    sheet.rowCount = copy.rowCount;
  }
  return { ok: true, body: { spreadsheetId: id, replies: requests.map(() => ({})) } };
}

/** A DeleteDimensionRequest on `sheets`, or why it is refused. */
function deleteDimension(sheets: FakeSheet[], request: unknown, at: string): Outcome | undefined {
  const where = `${at}.delete_dimension`;
  if (!isObject(request)) return refused(`Invalid value at '${where}'`);
  const extra = Object.keys(request).find((key) => key !== 'range');
  if (extra) return unknownName(extra, where);
  const { range } = request;
  if (!isObject(range)) return refused(`Invalid ${at}.deleteDimension: range must be set.`);
  const field = Object.keys(range).find((key) => !['sheetId', 'dimension', 'startIndex', 'endIndex'].includes(key));
  if (field) return unknownName(field, `${where}.range`);
  const [sheetId, startIndex, endIndex] = (['sheetId', 'startIndex', 'endIndex'] as const).map((key) =>
    int32(range[key]),
  );
  for (const [key, value] of [
    ['sheet_id', sheetId],
    ['start_index', startIndex],
    ['end_index', endIndex],
  ] as const) {
    if (value === null)
      return refused(`Invalid value at '${where}.range.${key}' (TYPE_INT32), ${JSON.stringify(range[camel(key)])}`);
  }
  const dimension = range.dimension ?? 'DIMENSION_UNSPECIFIED';
  if (!['DIMENSION_UNSPECIFIED', 'ROWS', 'COLUMNS'].includes(String(dimension)))
    return refused(
      `Invalid value at '${where}.range.dimension' (type.googleapis.com/google.apps.sheets.v4.Dimension), ${JSON.stringify(dimension)}`,
    );
  if (dimension === 'DIMENSION_UNSPECIFIED')
    return refused(`Invalid ${at}.deleteDimension: range.dimension is required.`);
  if (dimension === 'COLUMNS') return notModelled('deleteDimension on COLUMNS');
  const sheet = sheets.find((s) => s.sheetId === (sheetId ?? 0));
  if (!sheet) return refused(`Invalid ${at}.deleteDimension: No grid with id: ${sheetId ?? 0}`);
  const rows = Math.max(sheet.rowCount, sheet.cells.length);
  // Missing indexes leave the range unbounded on that side (DimensionRange).
  const [start, end] = [startIndex ?? 0, endIndex ?? rows];
  if (start < 0 || start > end)
    return refused(`Invalid ${at}.deleteDimension: startIndex (${start}) must be between 0 and endIndex (${end}).`);
  if (end > rows)
    return refused(
      `Invalid ${at}.deleteDimension: Cannot delete a row that doesn't exist. Tried to delete row index ${end - 1} but there are only ${rows} rows.`,
    );
  if (end - start >= rows) return refused(`Invalid ${at}.deleteDimension: You can't delete all the rows on the sheet.`);
  sheet.cells.splice(start, end - start);
  sheet.rowCount = rows - (end - start);
  return undefined;
}

const notModelled = (what: string): Outcome =>
  refused(`the fake Sheets API does not model ${what} (test/fakes/google-sheets-batch.ts)`, 501, 'UNIMPLEMENTED');

/** An int32 as protobuf's JSON takes it (a number or a decimal string); undefined when absent, null when invalid. */
function int32(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && Math.abs(number) < 2 ** 31 ? number : null;
}

const camel = (snake: string) => snake.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A partial-response mask (https://developers.google.com/workspace/sheets/api/guides/field-masks): `a,b.c,d(e,f)`, a
 * tree of field names; undefined when it does not parse.
 */
type Mask = Map<string, Mask | true>;

function parseMask(text: string): Mask | undefined {
  let at = 0;
  const list = (): Mask | undefined => {
    const mask: Mask = new Map();
    do {
      const path = /^[A-Za-z_][A-Za-z0-9_]*(?:[./][A-Za-z_][A-Za-z0-9_]*)*/.exec(text.slice(at))?.[0];
      if (!path) return undefined;
      at += path.length;
      let leaf: Mask | true = true;
      if (text[at] === '(') {
        at++;
        const inner = list();
        if (!inner || text[at] !== ')') return undefined;
        at++;
        leaf = inner;
      }
      const names = path.split(/[./]/);
      let node = mask;
      for (const name of names.slice(0, -1)) {
        const next = node.get(name);
        const child: Mask = next instanceof Map ? next : new Map();
        node.set(name, child);
        node = child;
      }
      node.set(names[names.length - 1]!, leaf);
    } while (text[at] === ',' && ++at);
    return mask;
  };
  const mask = list();
  return mask && at === text.length ? mask : undefined;
}

/** Whether every name in the mask is a field of the value (of each item, for a list). */
function fits(value: unknown, mask: Mask): boolean {
  if (Array.isArray(value)) return value.every((item) => fits(item, mask));
  if (!isObject(value)) return false;
  return [...mask].every(([name, leaf]) => name in value && (leaf === true || fits(value[name], leaf)));
}

/** The value with only the masked fields that it holds. */
function applyMask(value: unknown, mask: Mask): unknown {
  if (Array.isArray(value)) return value.map((item) => applyMask(item, mask));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [name, leaf] of mask) {
    if (name in value) out[name] = leaf === true ? value[name] : applyMask(value[name], leaf);
  }
  return out;
}
