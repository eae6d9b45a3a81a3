// Compiles every agent's User-Agent tokens and patterns into one matcher that makes a single
// pass over the header's bytes: product tokens are found by hashing each word as it is scanned.
import type { Agent } from './types.js';

/** A function from a User-Agent header value to the agent it names, if any. */
export type UserAgentMatcher = (userAgent: string) => Agent | undefined;

// Bytes that may appear inside a product-token word, mapped to their ASCII lower case; 0 for
// everything else (space, "/", ";", "(", "+", ",", and every byte of a non-ASCII character).
// So "GPTBot/1.0" and "(compatible; GPTBot" both yield the word "gptbot", while
// "Googlebot-Image" stays one word and never matches "Googlebot".
const FOLD = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  if (/[A-Za-z0-9_.-]/.test(String.fromCharCode(c))) FOLD[c] = c >= 65 && c <= 90 ? c | 0x20 : c;
}

/** ASCII lower-casing of one byte. */
function lower(byte: number): number {
  return byte >= 65 && byte <= 90 ? byte | 0x20 : byte;
}

// FNV-1a over lower-cased bytes.
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;

const encoder = new TextEncoder();
// Scratch space for the header's bytes. Matching is synchronous, so one buffer per module is
// safe; it grows for unusually long headers. Scanning a Uint8Array is markedly faster in V8
// than charCodeAt, and TextEncoder.encodeInto is a native bulk copy.
let scratch = new Uint8Array(1024);

/**
 * Builds the matcher for a list of agents. Token matches win over patterns; among tokens the
 * leftmost in the header wins; patterns are tried in catalog order only when no token matched,
 * which is what lets generic HTTP libraries (`^python-requests/`) yield to a named bot that
 * appends its own token.
 * @throws {RangeError} when a token is not printable ASCII starting with [A-Za-z0-9_.-], or a pattern does not compile.
 */
export function compileUserAgentMatcher(agents: readonly Agent[]): UserAgentMatcher {
  const entries: { hash: number; bytes: Uint8Array; agent: Agent }[] = [];
  const patterns: { regex: RegExp; agent: Agent }[] = [];
  for (const agent of agents) {
    for (const token of agent.match.tokens ?? []) {
      if (!/^[A-Za-z0-9_.-][\x20-\x7e]*$/.test(token)) {
        throw new RangeError(`agent "${agent.id}": match token must be printable ASCII starting with [A-Za-z0-9_.-], got ${JSON.stringify(token)}`);
      }
      const bytes = encoder.encode(token.toLowerCase());
      let hash = FNV_OFFSET;
      for (let i = 0; i < bytes.length && FOLD[bytes[i]!] !== 0; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
      entries.push({ hash, bytes, agent });
    }
    for (const source of agent.match.patterns ?? []) {
      let regex: RegExp;
      try {
        regex = new RegExp(source, 'i');
      } catch (error) {
        throw new RangeError(`agent "${agent.id}": match pattern ${JSON.stringify(source)} does not compile: ${(error as Error).message}`);
      }
      patterns.push({ regex, agent });
    }
  }

  // Open hash table in typed arrays: `slots` holds entry index + 1 per slot (0 = empty) and
  // `chain` links entries sharing a slot. Probing an Int32Array per scanned word is much
  // cheaper for V8 than loading objects, and most words of a browser UA hit an empty slot.
  let size = 64;
  while (size < entries.length * 4) size <<= 1;
  const mask = size - 1;
  const slots = new Int32Array(size);
  const chain = new Int32Array(entries.length + 1);
  const hashes = new Int32Array(entries.length + 1);
  entries.forEach((entry, index) => {
    const slot = entry.hash & mask;
    chain[index + 1] = slots[slot]!;
    hashes[index + 1] = entry.hash;
    slots[slot] = index + 1;
  });

  const mayMatchPattern = compilePatternPrefilter(patterns.map(({ regex }) => regex.source));

  /** The agent whose token starts at the word [start, end) of buf, if any. */
  const matchToken = (buf: Uint8Array, length: number, start: number, end: number, hash: number): Agent | undefined => {
    for (let index = slots[hash & mask]!; index !== 0; index = chain[index]!) {
      if (hashes[index] !== hash) continue;
      const { bytes, agent } = entries[index - 1]!;
      const stop = start + bytes.length;
      // The token's leading word must be the whole scanned word; any rest ("Nmap Scripting
      // Engine") must follow verbatim and end on a word boundary.
      if (stop < end || stop > length) continue;
      let i = 0;
      while (i < bytes.length && lower(buf[start + i]!) === bytes[i]) i++;
      if (i !== bytes.length) continue;
      if (stop < length && FOLD[buf[stop]!] !== 0) continue;
      return agent;
    }
    return undefined;
  };

  return (ua: string): Agent | undefined => {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit, plus one for the sentinel.
    if (ua.length * 3 + 1 > scratch.length) scratch = new Uint8Array(ua.length * 3 + 1);
    const buf = scratch;
    const length = encoder.encodeInto(ua, buf).written;
    buf[length] = 0; // a separator after the last word, so the loop needs no end test
    // Hot loop: tables and constants in locals. Module-level bindings compile to context loads
    // that V8 repeats on every byte, which measured about half the speed.
    const fold = FOLD;
    const table = slots;
    const tableMask = mask;
    const offset = FNV_OFFSET;
    const prime = FNV_PRIME;
    let start = -1;
    let hash = offset;
    for (let i = 0; i <= length; i++) {
      const folded = fold[buf[i]!]!;
      if (folded !== 0) {
        if (start < 0) {
          start = i;
          hash = offset;
        }
        hash = Math.imul(hash ^ folded, prime);
      } else if (start >= 0) {
        if (table[hash & tableMask] !== 0) {
          const agent = matchToken(buf, length, start, i, hash);
          if (agent !== undefined) return agent;
        }
        start = -1;
      }
    }
    if (!mayMatchPattern(ua)) return undefined;
    for (const { regex, agent } of patterns) {
      if (regex.test(ua)) return agent;
    }
    return undefined;
  };
}

/**
 * A quick test that is true whenever at least one of the patterns matches (it may also be true
 * when none does). Patterns anchored with `^` and free of a top-level `|` are joined under one
 * leading `^`, which fails on the first bytes of a browser UA. The few unanchored ones stay
 * separate regexes: measured in V8, one alternation of them is slower than their separate
 * literal searches.
 */
function compilePatternPrefilter(sources: readonly string[]): (ua: string) => boolean {
  if (sources.length === 0) return () => false;
  // Back-references and named groups would be renumbered or clash once joined: test each pattern.
  if (sources.some((source) => /\\[1-9k]|\(\?<[A-Za-z]/.test(source))) return () => true;
  const anchored = sources.filter((source) => source.startsWith('^') && !hasTopLevelAlternation(source));
  const rest = sources.filter((source) => !anchored.includes(source)).map((source) => new RegExp(source, 'i'));
  const head = anchored.length > 0 ? new RegExp(`^(?:${anchored.map((source) => `(?:${source.slice(1)})`).join('|')})`, 'i') : undefined;
  return (ua) => {
    if (head !== undefined && head.test(ua)) return true;
    for (const regex of rest) if (regex.test(ua)) return true;
    return false;
  };
}

/** Whether a regex source has a `|` outside every group and character class ("^a|b" does, "^a(?:b|c)" does not). */
function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']';
    else if (ch === '[') inClass = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) return true;
  }
  return false;
}
