// The CSV export's formula guard, read back by an independent RFC 4180 reader: no cell a
// spreadsheet opens starts (after leading whitespace) with a formula trigger, and the original text
// is always recoverable from what it shows. Examples pin the OWASP list and our additions.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, toCsv } from '../../src/api/csv.js';

/** RFC 4180 §2 read as a state machine: rows of fields, quoted fields with doubled quotes, CRLF rows. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"' && field === '') {
      // A quoted field runs to the quote not followed by another quote.
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
      if (i < text.length && text[i] !== ',' && !text.startsWith('\r\n', i)) throw new Error(`text after a closing quote at ${i}`);
      continue;
    }
    if (text[i] === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (text.startsWith('\r\n', i)) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      if (text[i] === '"' || text[i] === '\r' || text[i] === '\n') throw new Error(`unquoted ${JSON.stringify(text[i])} at ${i}`);
      field += text[i++];
    }
  }
  if (field !== '' || row.length > 0) throw new Error('the last row has no CRLF');
  return rows;
}

// What a spreadsheet may skip before looking at a cell's first character: whitespace of every
// kind, control characters and invisible format characters (zero-width space, BOM, soft hyphen).
const SKIPPED = /^[\s\p{Cc}\p{Cf}]*/u;
// Characters that make a cell a formula: OWASP's = + - @ (TAB and CR count on their own, below),
// `;`, and the fullwidth and small forms of = + - @.
const TRIGGERS = new Set(['=', '+', '-', '@', ';', '\uff1d', '\uff0b', '\uff0d', '\uff20', '\ufe66', '\ufe62', '\ufe63', '\ufe6b']);

/** Whether a spreadsheet could read this cell text as a formula. */
function formulaLike(text: string): boolean {
  if (text.startsWith('\t') || text.startsWith('\r')) return true;
  const first = [...text.replace(SKIPPED, '')][0];
  return first !== undefined && TRIGGERS.has(first);
}

/** The original text from what the spreadsheet shows: one added `'` comes off where the rest, past its quotes, is formula-like. */
function recover(shown: string): string {
  return shown.startsWith("'") && formulaLike(shown.replace(/^'+/, '')) ? shown.slice(1) : shown;
}

// Text biased towards the hard cases: triggers after runs of assorted whitespace and invisible
// characters, quotes (ours and CSV's), separators and line breaks, mixed with any code point.
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(...TRIGGERS, '\t', '\r', '\n', ' ', '\u00a0', '\u2003', '\u3000', '\u200b', '\ufeff', '\u00ad', '\u0000', '\u000b', "'", '"', ','),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

describe('csvCell', () => {
  it('leaves no cell that starts with a formula trigger, and keeps the original text recoverable', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const [[shown, ...rest] = []] = readCsv(`${csvCell(text)}\r\n`);
        expect(rest).toEqual([]);
        expect(formulaLike(shown!)).toBe(false);
        // Either untouched, or with one `'` in front; the mark comes off exactly where it was added.
        expect([text, `'${text}`]).toContain(shown);
        expect(recover(shown!)).toBe(text);
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps rows and columns intact: a document of such cells reads back cell for cell', () => {
    fc.assert(
      fc.property(fc.array(fc.array(tricky, { minLength: 1, maxLength: 5 }), { maxLength: 5 }), (rows) => {
        const header = rows[0]?.map((_, i) => `c${i}`) ?? ['c0'];
        const width = header.length;
        const table = rows.map((row) => Array.from({ length: width }, (_, i) => row[i] ?? ''));
        const read = readCsv(toCsv(header, table));
        expect(read[0]).toEqual(header);
        expect(read.slice(1).map((row) => row.map(recover))).toEqual(table);
        for (const row of read) for (const cell of row) expect(formulaLike(cell)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('marks each trigger of the OWASP list and our additions, also after leading whitespace', () => {
    const marked = ['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx', ';x', ' =1', '  +1', '\t-1', '\u00a0@x', '\u3000=1', '\u200b=1', '\ufeff=1', '\uff1d1', '\uff0b1', '\uff0d1', '\uff201', "'=1", "''+1"];
    for (const text of marked) expect([text, csvCell(text)]).toEqual([text, expect.stringMatching(/^"?'/)]);
    expect(csvCell(' =1')).toBe("' =1");
    expect(csvCell("'=1")).toBe("''=1");
    expect(csvCell('=HYPERLINK("http://x")')).toBe('"\'=HYPERLINK(""http://x"")"');
    // Ordinary text is left alone, including leading spaces and a `'` before harmless text.
    for (const text of ['plain', ' hi', 'a=b', "'quoted", '1-2', '', 'GPTBot/1.2']) expect(csvCell(text)).toBe(text);
    // Numbers are numbers, not text a spreadsheet parses.
    expect(csvCell(-3)).toBe('-3');
  });
});
