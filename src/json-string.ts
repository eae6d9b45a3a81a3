// Characters JSON.stringify escapes in a string (RFC 8259 §7), the JS line separators and
// surrogates (a lone one is escaped by well-formed JSON.stringify).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029\ud800-\udfff]/;

/**
 * A JSON string literal, exactly as `JSON.stringify(value)` writes it; skips JSON.stringify for
 * the common plain case, which the core's hot serialisers (identification answers, visit
 * batches) meet nearly every time.
 */
export function jsonString(value: string): string {
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}
