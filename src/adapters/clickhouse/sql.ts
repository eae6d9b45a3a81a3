// SQL literals for ClickHouse 18.16, which has no query parameters ({name:Type} arrived in 19.x):
// every value a query carries is quoted here, and only here.

/**
 * A ClickHouse string literal. Backslash and quote are escaped (ClickHouse string literals treat
 * `\` as an escape character), and control characters are written as escapes so a value can never
 * end the literal or the statement.
 * @example
 * sqlString("it's"); // "'it\\'s'"
 */
export function sqlString(value: string): string {
  if (typeof value !== 'string') throw new TypeError(`expected a string, got ${typeof value}`);
  return `'${value.replace(/[\\'\u0000-\u001f]/g, (char) => {
    switch (char) {
      case '\\':
        return '\\\\';
      case "'":
        return "\\'";
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
    }
  })}'`;
}

/** A signed integer literal (milliseconds, also before 1970). @throws {RangeError} for anything but a safe integer. */
export function sqlInt(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`expected an integer, got ${String(value)}`);
  return String(value);
}

/** An unsigned integer literal (milliseconds, limits). @throws {RangeError} for anything but a safe integer >= 0. */
export function sqlUInt(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`expected an integer >= 0, got ${String(value)}`);
  return String(value);
}

// ClickHouse parses at most max_query_size bytes of a statement (262,144 by default) and fails it
// past that ("Max query size exceeded", code 62). A list that grows with traffic goes in pieces of
// at most half that, leaving the other half for the rest of the statement.
const LIST_BYTES = 131_072;

/**
 * SQL literals joined into comma-separated lists of at most `maxBytes` (UTF-8) each, in order;
 * a literal longer than that goes alone. No literals, no lists.
 * @example
 * sqlLists(["'a'", "'b'", "'c'"], 8); // ["'a', 'b'", "'c'"]
 */
export function sqlLists(literals: readonly string[], maxBytes = LIST_BYTES): string[] {
  const lists: string[] = [];
  let list: string[] = [];
  let bytes = 0;
  for (const literal of literals) {
    const size = Buffer.byteLength(literal) + 2;
    if (list.length > 0 && bytes + size > maxBytes) {
      lists.push(list.join(', '));
      list = [];
      bytes = 0;
    }
    list.push(literal);
    bytes += size;
  }
  if (list.length > 0) lists.push(list.join(', '));
  return lists;
}

/**
 * Runs `query(list)` for each list of `sqlLists(literals)`, one after the other (a long list does
 * not take many of ClickHouse's concurrent queries at once), and returns their rows in order.
 * @example
 * const found = await rowsInLists(rows, ids.map(sqlString), (list) => `SELECT id FROM {db}.visits WHERE id IN (${list})`);
 */
export async function rowsInLists<T>(rows: (query: string) => Promise<T[]>, literals: readonly string[], query: (list: string) => string): Promise<T[]> {
  let found: T[] = [];
  for (const list of sqlLists(literals)) found = found.concat(await rows(query(list)));
  return found;
}
