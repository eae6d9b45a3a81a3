// CSV export (RFC 4180): quoting, CRLF rows, and the guard against spreadsheet formula injection.
import type { ApiResponse } from './types.js';

/** One CSV cell: text is quoted as needed, numbers are written as they are, null and undefined are empty. */
export type CsvCell = string | number | boolean | null | undefined;

// OWASP "CSV injection": a spreadsheet runs a cell starting with one of these as a formula (or,
// for TAB and CR, after trimming). Visit data is attacker-controlled (paths, user agents).
const FORMULA_START = /^[=+\-@\t\r]/;
// RFC 4180 §2.6: fields holding quotes, commas or line breaks are quoted.
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One cell as CSV text: text starting with = + - @ TAB or CR gets a leading `'` so spreadsheets show
 * it instead of evaluating it; quotes are doubled inside quoted fields (RFC 4180 §2.7).
 * @example
 * csvCell('=HYPERLINK("x")'); // '"\'=HYPERLINK(""x"")"'
 */
export function csvCell(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell !== 'string') return String(cell);
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A CSV document: a header row and data rows, CRLF after every row (RFC 4180 §2.1-2.3). */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvCell[]>): string {
  let text = `${header.map(csvCell).join(',')}\r\n`;
  for (const row of rows) text += `${row.map(csvCell).join(',')}\r\n`;
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
