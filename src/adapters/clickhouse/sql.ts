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

/** An unsigned integer literal (milliseconds, limits). @throws {RangeError} for anything but a safe integer >= 0. */
export function sqlUInt(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`expected an integer >= 0, got ${String(value)}`);
  return String(value);
}
