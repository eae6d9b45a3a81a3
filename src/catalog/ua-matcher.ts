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

interface TokenEntry {
  readonly hash: number;
  /** The token as lower-cased ASCII bytes, compared against the header from the start of a word. */
  readonly bytes: Uint8Array;
  readonly agent: Agent;
  /** Next entry in the same table slot (hash chaining). */
  readonly next: TokenEntry | undefined;
}

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
  let tokenCount = 0;
  for (const agent of agents) tokenCount += agent.match.tokens?.length ?? 0;
  let size = 64;
  while (size < tokenCount * 4) size <<= 1;
  const mask = size - 1;
  const table: (TokenEntry | undefined)[] = new Array<TokenEntry | undefined>(size).fill(undefined);

  const patterns: { regex: RegExp; agent: Agent }[] = [];
  for (const agent of agents) {
    for (const token of agent.match.tokens ?? []) {
      if (!/^[A-Za-z0-9_.-][\x20-\x7e]*$/.test(token)) {
        throw new RangeError(`agent "${agent.id}": match token must be printable ASCII starting with [A-Za-z0-9_.-], got ${JSON.stringify(token)}`);
      }
      const bytes = encoder.encode(token.toLowerCase());
      let hash = FNV_OFFSET;
      for (let i = 0; i < bytes.length && FOLD[bytes[i]!] !== 0; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
      const slot = hash & mask;
      table[slot] = { hash, bytes, agent, next: table[slot] };
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

  /** The agent whose token starts at the word [start, end) of buf, if any. */
  const matchToken = (buf: Uint8Array, length: number, start: number, end: number, hash: number): Agent | undefined => {
    for (let entry = table[hash & mask]; entry !== undefined; entry = entry.next) {
      if (entry.hash !== hash) continue;
      const bytes = entry.bytes;
      const stop = start + bytes.length;
      // The token's leading word must be the whole scanned word; any rest ("Nmap Scripting
      // Engine") must follow verbatim and end on a word boundary.
      if (stop < end || stop > length) continue;
      let i = 0;
      while (i < bytes.length && lower(buf[start + i]!) === bytes[i]) i++;
      if (i !== bytes.length) continue;
      if (stop < length && FOLD[buf[stop]!] !== 0) continue;
      return entry.agent;
    }
    return undefined;
  };

  return (ua: string): Agent | undefined => {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit.
    if (ua.length * 3 > scratch.length) scratch = new Uint8Array(ua.length * 3);
    const buf = scratch;
    const length = encoder.encodeInto(ua, buf).written;
    let start = -1;
    let hash = FNV_OFFSET;
    for (let i = 0; i <= length; i++) {
      const folded = i < length ? FOLD[buf[i]!]! : 0;
      if (folded !== 0) {
        if (start < 0) {
          start = i;
          hash = FNV_OFFSET;
        }
        hash = Math.imul(hash ^ folded, FNV_PRIME);
      } else if (start >= 0) {
        if (table[hash & mask] !== undefined) {
          const agent = matchToken(buf, length, start, i, hash);
          if (agent !== undefined) return agent;
        }
        start = -1;
      }
    }
    for (const { regex, agent } of patterns) {
      if (regex.test(ua)) return agent;
    }
    return undefined;
  };
}
