/**
 * Ranges in A1 notation (https://developers.google.com/workspace/sheets/api/guides/concepts#cell): `'Sheet'!A1:C1`.
 * The sheet's name is always quoted, with a `'` in it doubled as spreadsheet formulas write it: the guide asks for
 * quotes around names with spaces or special characters, and a bare `A1` would name a cell, not the sheet "A1".
 */

export function sheetRange(sheet: string, cells: string): string {
  return `'${sheet.replaceAll("'", "''")}'!${cells}`;
}

/** 1 → A, 26 → Z, 27 → AA: the column letters of a 1-based column number. */
export function columnLetters(column: number): string {
  let letters = '';
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** The cells of one row from column A across `width` columns: `A7:K7`. */
export function rowCells(row: number, width: number): string {
  return `A${row}:${columnLetters(Math.max(1, width))}${row}`;
}
