// Names typed by an operator show in page titles, lists, CSV files and webhook payloads: a control
// character or line separator in one could break or forge any of those lines.
const CONTROL_OR_LINE_SEPARATOR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Whether `text` holds a C0/C1 control character (CR, LF and tab included) or U+2028/U+2029. */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_OR_LINE_SEPARATOR.test(text);
}

// With the u flag a surrogate range matches only an unpaired half: a pair is one code point.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** Whether `text` holds an unpaired surrogate, which UTF-8 cannot carry: SQLite and JSON readers would store or show U+FFFD instead. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}
