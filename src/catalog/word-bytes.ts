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

/**
 * Whether the word byte at `at` ("_", "-" or ".") begins a version fused to a name that runs to
 * the word's end: "_2.3.62" of "TheUsefulbot_2.3.62", "_v0.3" of "masidani_bot_v0.3", ".0.5" of
 * "eseek-crawler.0.5" (as `larbin_2.6.2` is the token `larbin` with its version).
 */
export function fusedVersionAt(buf: Uint8Array, at: number): boolean {
  const separator = FOLD[buf[at]!]!;
  if (separator !== 95 && separator !== 45 && separator !== 46) return false;
  let i = at + 1;
  if (FOLD[buf[i]!] === 118) i++; // "v"
  const first = FOLD[buf[i]!]!;
  if (first < 48 || first > 57) return false;
  for (; FOLD[buf[i]!] !== 0; i++) {
    const folded = FOLD[buf[i]!]!;
    if ((folded < 48 || folded > 57) && folded !== 46 && folded !== 95 && folded !== 45) return false;
  }
  return true;
}
