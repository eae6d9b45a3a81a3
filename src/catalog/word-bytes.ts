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
