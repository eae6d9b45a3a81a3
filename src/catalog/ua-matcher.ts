// Compiles every agent's User-Agent tokens and patterns into one matcher that makes a single
// pass over the string: product tokens are found by hashing each word as it is scanned.
import type { Agent } from './types.js';

/** A function from a User-Agent header value to the agent it names, if any. */
export type UserAgentMatcher = (userAgent: string) => Agent | undefined;

// Characters that may appear inside a product-token word. Anything else (space, "/", ";",
// "(", "+", ",", non-ASCII) ends a word, so "GPTBot/1.0" and "(compatible; GPTBot" both yield
// the word "GPTBot", while "Googlebot-Image" stays one word and never matches "Googlebot".
const WORD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  WORD[c] = /[A-Za-z0-9_.-]/.test(ch) ? 1 : 0;
}

/** Whether a UTF-16 code unit is part of a word. */
function isWordChar(code: number): boolean {
  return code < 128 && WORD[code] === 1;
}

/** ASCII lower-casing of one code unit (other code units unchanged). */
function lower(code: number): number {
  return code >= 65 && code <= 90 ? code | 0x20 : code;
}

// FNV-1a over lower-cased code units, kept in the positive small-integer range so that the
// table index and comparisons stay on V8's fast path.
const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16777619;
function step(hash: number, code: number): number {
  return Math.imul(hash ^ lower(code), FNV_PRIME);
}

interface TokenEntry {
  readonly hash: number;
  /** The token, lower-cased, compared against the header from the start of a word. */
  readonly text: string;
  readonly agent: Agent;
  /** Next entry in the same table slot (hash chaining). */
  next: TokenEntry | undefined;
}

/** Length of the leading word of a token: the part that is hashed. */
function leadingWordLength(token: string): number {
  let i = 0;
  while (i < token.length && isWordChar(token.charCodeAt(i))) i++;
  return i;
}

/**
 * Builds the matcher for a list of agents. Token matches win over patterns; among tokens the
 * leftmost in the header wins; patterns are tried in catalog order only when no token matched,
 * which is what lets generic HTTP libraries (`^python-requests/`) yield to a named bot that
 * appends its own token.
 * @throws {RangeError} when a token does not start with a word character or a pattern does not compile.
 */
export function compileUserAgentMatcher(agents: readonly Agent[]): UserAgentMatcher {
  let tokenCount = 0;
  for (const agent of agents) tokenCount += agent.match.tokens?.length ?? 0;
  let size = 64;
  while (size < tokenCount * 4) size <<= 1;
  const mask = size - 1;
  const table: (TokenEntry | undefined)[] = new Array(size).fill(undefined);

  const patterns: { regex: RegExp; agent: Agent }[] = [];
  for (const agent of agents) {
    for (const token of agent.match.tokens ?? []) {
      const lead = leadingWordLength(token);
      if (lead === 0) {
        throw new RangeError(`agent "${agent.id}": match token must start with [A-Za-z0-9_.-], got ${JSON.stringify(token)}`);
      }
      let hash = FNV_OFFSET;
      for (let i = 0; i < lead; i++) hash = step(hash, token.charCodeAt(i));
      const slot = hash & mask;
      table[slot] = { hash, text: token.toLowerCase(), agent, next: table[slot] };
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

  const matchToken = (ua: string, start: number, end: number, hash: number): Agent | undefined => {
    for (let entry = table[hash & mask]; entry !== undefined; entry = entry.next) {
      if (entry.hash !== hash) continue;
      const text = entry.text;
      const stop = start + text.length;
      if (stop > ua.length) continue;
      // Tokens are one word ("GPTBot") or start with one ("Nmap Scripting Engine"): the
      // leading word must be the whole scanned word, the rest must follow verbatim.
      let i = 0;
      while (i < text.length && lower(ua.charCodeAt(start + i)) === text.charCodeAt(i)) i++;
      if (i !== text.length) continue;
      if (stop < end) continue; // token shorter than the scanned word: not on a boundary
      if (stop < ua.length && isWordChar(ua.charCodeAt(stop))) continue;
      return entry.agent;
    }
    return undefined;
  };

  return (ua: string): Agent | undefined => {
    const length = ua.length;
    let i = 0;
    while (i < length) {
      // Skip separators.
      while (i < length && !isWordChar(ua.charCodeAt(i))) i++;
      if (i >= length) break;
      const start = i;
      let hash = FNV_OFFSET;
      while (i < length) {
        const code = ua.charCodeAt(i);
        if (!isWordChar(code)) break;
        hash = step(hash, code);
        i++;
      }
      const agent = matchToken(ua, start, i, hash);
      if (agent !== undefined) return agent;
    }
    for (const { regex, agent } of patterns) {
      if (regex.test(ua)) return agent;
    }
    return undefined;
  };
}
