// The bytes a User-Agent's words are made of, as the matcher reads them (data/README.md
// "Matching rules"): shared by the token matcher and the unlisted-agent naming.

/**
 * Bytes that may appear inside a product-token word, mapped to their ASCII lower case; 0 for
 * everything else (space, "/", ";", "(", "+", ",", ":", and every byte of a non-ASCII character).
 * So "GPTBot/1.0" and "(compatible; GPTBot" both yield the word "gptbot". Folded letters are
 * 97..122 and every other word byte ("-" 45, "." 46, digits 48..57, "_" 95) is below 97, which
 * is what lets a scan tell a letter from a possible family boundary with one comparison.
 */
export const FOLD = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  if (/[A-Za-z0-9_.-]/.test(String.fromCharCode(c))) FOLD[c] = c >= 65 && c <= 90 ? c | 0x20 : c;
}

export const HYPHEN = 45;
export const DOT = 46;
export const UNDERSCORE = 95;
/** Whether a folded byte is a digit. */
export const isDigit = (folded: number): boolean => folded >= 48 && folded <= 57;

/** Whether a folded byte can be part of a version: a digit, ".", "_" or "-". */
const isVersionByte = (folded: number): boolean => isDigit(folded) || folded === DOT || folded === UNDERSCORE || folded === HYPHEN;

/** Where a version starting at `at` has its first digit (after an optional "v"), or -1 when none starts there. */
function versionDigitAt(buf: Uint8Array, at: number): number {
  const i = FOLD[buf[at]!] === 118 ? at + 1 : at; // "v"
  return isDigit(FOLD[buf[i]!]!) ? i : -1;
}

/** Whether [from, to) is a version: digits, dots, underscores and hyphens only ("0.5.0", "2024"). */
export function onlyVersion(buf: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isVersionByte(FOLD[buf[i]!]!)) return false;
  return true;
}

/**
 * Whether the word byte at `at` ("_", "-" or ".") begins a version fused to a name that runs to
 * the word's end: "_2.3.62" of "TheUsefulbot_2.3.62", "_v0.3" of "masidani_bot_v0.3", ".0.5" of
 * "eseek-crawler.0.5" (as `larbin_2.6.2` is the token `larbin` with its version).
 */
export function fusedVersionAt(buf: Uint8Array, at: number): boolean {
  const separator = FOLD[buf[at]!]!;
  if (separator !== UNDERSCORE && separator !== HYPHEN && separator !== DOT) return false;
  let i = versionDigitAt(buf, at + 1);
  if (i < 0) return false;
  // Read on only while the bytes can be a version, then the word must end: the scan calls this
  // for every bot word a word holds, so reading each to the word's end would cost quadratic
  // time on a crafted header ("xbot_1xbot_1...").
  while (isVersionByte(FOLD[buf[i]!]!)) i++;
  return FOLD[buf[i]!] === 0;
}

const SPACE = 32;

/**
 * Whether [from, length) is nothing, or one version after a space, "-" or "_" and nothing more
 * (" 1.0", "-3.1.21", " v2"): what may follow a product's name in a header that is only the name.
 * `buf` holds a separator (0) at `length`, as the matcher's does.
 */
export function versionTail(buf: Uint8Array, from: number, length: number): boolean {
  if (from === length) return true;
  const separator = buf[from];
  if (separator !== SPACE && separator !== HYPHEN && separator !== UNDERSCORE) return false;
  const i = versionDigitAt(buf, from + 1);
  return i >= 0 && onlyVersion(buf, i, length);
}
