// CSV export (RFC 4180): quoting, CRLF rows, and the guard against spreadsheet formula injection.
import type { ApiResponse } from './types.js';

/** One CSV cell: text is quoted as needed, numbers are written as they are, null and undefined are empty. */
export type CsvCell = string | number | boolean | null | undefined;

// OWASP "CSV injection": a spreadsheet runs a cell starting with = + - @ as a formula, and TAB or
// CR are on its list because some trim them first. Visit data is attacker-controlled (paths, user
// agents). We also count `;` (a formula separator in some locales), the fullwidth and small forms
// of = + - @ (which IME input and some spreadsheets turn into the ASCII ones), and any leading run
// of whitespace, control or invisible format characters before one of them (spreadsheets trim
// leading spaces, and a zero-width space hides a formula from a reviewer, not from every reader).
// A cell already starting with `'` before such text gets one more, so the mark is always removable:
// drop one leading `'` where the rest matches this, and the original text is back.
const FORMULA_START = /^'*(?:[\t\r]|[\s\p{Cc}\p{Cf}]*[=+\-@;\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63\ufe6b])/u;
// RFC 4180 §2.6: fields holding quotes, commas or line breaks are quoted.
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell as CSV text: text a spreadsheet could read as a formula (starting with = + - @ ; TAB or
 * CR, their fullwidth forms, or any of them after leading whitespace) gets a leading `'`, so
 * spreadsheets show it as text instead of evaluating it and the original stays readable after it;
 * quotes are doubled inside quoted fields (RFC 4180 §2.7).
 * @example
 * csvCell('=HYPERLINK("x")'); // '"\'=HYPERLINK(""x"")"'
 */
export function csvCell(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell !== 'string') return String(cell);
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV row with its CRLF (RFC 4180 §2.1). */
export function csvLine(row: readonly CsvCell[]): string {
  return `${row.map(csvCell).join(',')}\r\n`;
}

/** A CSV document: a header row and data rows, CRLF after every row (RFC 4180 §2.1-2.3). */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  let text = csvLine(header);
  for (const row of rows) text += csvLine(row);
  return text;
}

/** A CSV download response (RFC 4180 §3 media type; RFC 6266 attachment with a plain ASCII file name). */
export function csvResponse(filename: string, text: string, headers: Record<string, string> = {}): ApiResponse {
  const safe = filename.replace(/[^A-Za-z0-9._-]/g, '_');
  return {
    status: 200,
    headers: { 'content-type': 'text/csv; charset=utf-8; header=present', 'content-disposition': `attachment; filename="${safe}"`, 'cache-control': 'no-store', ...headers },
    body: text,
  };
}
