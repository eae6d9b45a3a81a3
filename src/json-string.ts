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

/**
 * Whether `value` has more than `max` characters (Unicode code points, as JSON Schema's maxLength
 * counts them), not UTF-16 code units: an emoji is one character, not two. Counted only past `max`
 * code units, so a short string costs one comparison.
 */
export function longerThan(value: string, max: number): boolean {
  if (value.length <= max) return false;
  let characters = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++characters > max) return true;
  }
  return false;
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
