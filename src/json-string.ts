// Printable ASCII but '"' and '\': a string of only these is its own JSON text (RFC 8259 §7 escapes
// none of them), one UTF-8 byte a character. Anything else (controls, quotes, backslashes, the JS
// line separators, lone surrogates, any non-ASCII) goes the JSON.stringify way.
const NOT_PLAIN = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

// With the u flag a surrogate range matches only an unpaired half: a pair is one code point.
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** Whether `value` holds an unpaired surrogate, which UTF-8 (so any stored or sent JSON) cannot carry: it would turn into U+FFFD. */
export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/** Whether `value` is plain text: `"${value}"` is its JSON, and its UTF-8 size is its length. */
export function isPlainText(value: string): boolean {
  return !NOT_PLAIN.test(value);
}

/**
 * A JSON string literal, exactly as `JSON.stringify(value)` writes it; skips JSON.stringify for
 * the common plain case, which the core's hot serialisers (identification answers, visit
 * batches) meet nearly every time.
 */
export function jsonString(value: string): string {
  return isPlainText(value) ? `"${value}"` : JSON.stringify(value);
}
