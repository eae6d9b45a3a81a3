// Compiles every agent's User-Agent tokens into one matcher that makes a single pass over the
// header's bytes, looking product tokens up word by word (data/README.md "Matching rules").
import type { Agent, AgentLayer } from './types.js';

/** A function from a User-Agent header value to the agent it names, if any. */
export type UserAgentMatcher = (userAgent: string) => Agent | undefined;

// Bytes that may appear inside a product-token word, mapped to their ASCII lower case; 0 for
// everything else (space, "/", ";", "(", "+", ",", ":", and every byte of a non-ASCII character).
// So "GPTBot/1.0" and "(compatible; GPTBot" both yield the word "gptbot". Folded letters are
// 97..122 and every other word byte ("-" 45, "." 46, digits 48..57, "_" 95) is below 97, which
// is what lets the scan test for a family boundary with one comparison.
const FOLD = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  if (/[A-Za-z0-9_.-]/.test(String.fromCharCode(c))) FOLD[c] = c >= 65 && c <= 90 ? c | 0x20 : c;
}
const HYPHEN = 45;
const DOT = 46;
const UNDERSCORE = 95;
const isDigit = (folded: number): boolean => folded >= 48 && folded <= 57;
const isLetter = (folded: number): boolean => folded >= 97;
const isAlphanumeric = (folded: number): boolean => isLetter(folded) || isDigit(folded);

// How strongly a match names the sender (data/README.md): a bot's own token inside its contact
// URL beats a product token it borrows ("Googlebot/2.1 ... +https://deepcrawl.com/bot" is
// DeepCrawl); any bot beats the library it is built with, which beats the platform it runs on.
const RANK_URL = 4;
// Scan states for URLs in the header.
const OUTSIDE = 0;
const HOST = 1;
const PATH = 2;
const RANK_BOT = 3;
const LAYER_RANK: Readonly<Record<AgentLayer, number>> = { library: 2, platform: 1 };

/**
 * A word's lookup key: its length and first three and last folded bytes (the third is 0 in a
 * shorter word). Cheap to form at the word's end (four loads), so the scan does no per-byte
 * hashing; keys may collide (they cost a byte compare), but a common browser word rarely shares
 * one with a token ("mobile" and "mollie" differ in the third byte). Never 0: a word has a length.
 */
function wordKey(length: number, first: number, second: number, third: number, last: number): number {
  return (((length & 0x7ff) << 21) | (first << 14) | (second << 7) | last) ^ (third << 3);
}

/** The key of the word [start, end) of buf. */
function keyOfWord(buf: Uint8Array, start: number, end: number): number {
  const fold = FOLD;
  const length = end - start;
  return wordKey(length, fold[buf[start]!]!, fold[buf[start + 1]!]!, length > 2 ? fold[buf[start + 2]!]! : 0, fold[buf[end - 1]!]!);
}

/** One compiled token: the leading word is looked up, the rest compared in place. */
interface Entry {
  readonly agent: Agent;
  readonly rank: number;
  /** The token's leading word, lower-cased. */
  readonly word: Uint8Array;
  /** What must follow the leading word verbatim (lower-cased), e.g. " scripting engine" or "/". */
  readonly rest: Uint8Array;
  /** `^token`: the word must start the header. */
  readonly atStart: boolean;
  /** `token$`: the token must end the header. */
  readonly atEnd: boolean;
  /** Family members do not match, only a version suffix (`match.exact`). */
  readonly exact: boolean;
}

const encoder = new TextEncoder();
// Scratch space for the header's bytes. Matching is synchronous, so one buffer per module is
// safe; it grows for unusually long headers. Scanning a Uint8Array is markedly faster in V8
// than charCodeAt, and TextEncoder.encodeInto is a native bulk copy.
let scratch = new Uint8Array(1024);

// A token: optional "^", a first byte that starts a word, printable ASCII, optional "$".
const TOKEN_SYNTAX = /^\^?[A-Za-z0-9_.-][\x20-\x7e]*$/;

/** Parses one match token (`^curl`, `RED/`, `Nmap Scripting Engine`, `^node$`). */
function compileToken(agent: Agent, token: string, rank: number, exact: boolean): Entry {
  if (!TOKEN_SYNTAX.test(token) || token === '^') {
    throw new RangeError(`agent "${agent.id}": match token must be printable ASCII starting with [A-Za-z0-9_.-] (optionally "^"), got ${JSON.stringify(token)}`);
  }
  const atStart = token.startsWith('^');
  // The scan skips "www." at the start of a word, so a host token is stored without it.
  let body = (atStart ? token.slice(1) : token).replace(/^www\.(?=[A-Za-z0-9])/i, '');
  const atEnd = body.length > 1 && body.endsWith('$');
  if (atEnd) body = body.slice(0, -1);
  const bytes = encoder.encode(body.toLowerCase());
  let split = 0;
  while (split < bytes.length && FOLD[bytes[split]!] !== 0) split++;
  if (split === 0) throw new RangeError(`agent "${agent.id}": match token ${JSON.stringify(token)} must start with a word`);
  return { agent, rank, word: bytes.subarray(0, split), rest: bytes.subarray(split), atStart, atEnd, exact };
}

/**
 * Builds the matcher for a list of agents.
 *
 * The header is scanned once, word by word ([A-Za-z0-9_.-] runs). A token's leading word
 * matches a whole word, or the start of a word up to a family boundary: "-", "." or "_" after a
 * letter or digit, or a digit after a letter when only a version follows (`Baiduspider-image`,
 * `AhrefsBot.Feeds`, `larbin_2.6.3` and `trendictionbot0.5.0` find `Baiduspider`, `AhrefsBot`,
 * `larbin` and `trendictionbot`); within a word the longest token wins (`Googlebot-Image` over
 * `Googlebot`). Across words the higher rank wins (a token inside a URL, a bot, a library, a
 * platform), then the leftmost. Regular-expression patterns are tried, in catalog order, only
 * when no token matched.
 * @throws {RangeError} when a token is malformed or a pattern does not compile.
 */
export function compileUserAgentMatcher(agents: readonly Agent[]): UserAgentMatcher {
  const entries: Entry[] = [];
  const patterns: { regex: RegExp; agent: Agent }[] = [];
  for (const agent of agents) {
    const rank = agent.match.layer === undefined ? RANK_BOT : LAYER_RANK[agent.match.layer];
    if (rank === undefined) throw new RangeError(`agent "${agent.id}": match.layer must be "library" or "platform", got ${JSON.stringify(agent.match.layer)}`);
    for (const token of agent.match.tokens ?? []) entries.push(compileToken(agent, token, rank, agent.match.exact === true));
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

  // Open-addressed table of word keys in typed arrays: `keyAt` holds a key per slot (0 = empty;
  // a key is never 0, its length is), `headAt` the first entry with that key (index + 1), and
  // `chain` links the entries sharing a key. A browser's word costs one Int32Array load that
  // finds an empty slot or another key, and no call; only a word whose key a token has is probed.
  let bits = 8;
  while (1 << bits < entries.length * 8) bits++;
  const shift = 32 - bits;
  const mask = (1 << bits) - 1;
  const keyAt = new Int32Array(1 << bits);
  const headAt = new Int32Array(1 << bits);
  const chain = new Int32Array(entries.length + 1);
  // Entries are chained in reverse, so walk them back in catalog order.
  for (let index = entries.length - 1; index >= 0; index--) {
    const { word } = entries[index]!;
    const key = wordKey(word.length, word[0]!, word[1] ?? 0, word[2] ?? 0, word[word.length - 1]!);
    let slot = Math.imul(key, 0x9e3779b1) >>> shift;
    while (keyAt[slot] !== 0 && keyAt[slot] !== key) slot = (slot + 1) & mask;
    keyAt[slot] = key;
    chain[index + 1] = headAt[slot]!;
    headAt[slot] = index + 1;
  }

  const mayMatchPattern = compilePatternPrefilter(patterns.map(({ regex }) => regex.source));

  // The best match so far, shared by the helpers below (matching is synchronous).
  let best: Entry | undefined;
  let bestRank = 0;
  let bestStart = -1;

  /**
   * Checks the entries from `head` (those whose key is the key of the word [start, end) of buf),
   * `end` being the word's end or a family boundary inside it (then `wordEnd` is where the whole
   * word ends); records a better match. `inUrl` says the word is a URL's host; `origin` is where
   * the header's first word starts.
   */
  const probe = (head: number, buf: Uint8Array, length: number, start: number, end: number, wordEnd: number, inUrl: boolean, origin: number): void => {
    const fold = FOLD;
    for (let index = head; index !== 0; index = chain[index]!) {
      const entry = entries[index - 1]!;
      const { word, rest } = entry;
      let i = 0;
      while (i < word.length && fold[buf[start + i]!] === word[i]) i++;
      if (i !== word.length) continue;
      if (entry.atStart && start !== origin) continue;
      let stop = end;
      if (end < wordEnd) {
        // A family member: no rest may follow, and a digit boundary only before a version
        // (as any boundary of an exact token: `Applebot_2` but not `Applebot-like`).
        if (rest.length > 0) continue;
        const digit = isDigit(fold[buf[end]!]!);
        if ((digit || entry.exact) && !onlyVersion(buf, digit ? end : end + 1, wordEnd)) continue;
        stop = wordEnd;
      } else if (rest.length > 0) {
        if (end + rest.length > length) continue;
        let j = 0;
        while (j < rest.length && lower(buf[end + j]!) === rest[j]) j++;
        if (j !== rest.length) continue;
        stop = end + rest.length;
        // A rest ending inside a word must end the word there or at a family boundary
        // ("Nmap Scripting Engine;" and "pinterest.com/bot.html", not "...Enginex").
        if (FOLD[rest[rest.length - 1]!] !== 0 && isAlphanumeric(FOLD[buf[stop]!]!)) continue;
      }
      if (entry.atEnd && stop !== length) continue;
      // A URL outranks only a token borrowed from another operator: an operator's product
      // token and its own site in one header are read left to right as usual.
      let rank = inUrl && entry.rank === RANK_BOT ? RANK_URL : entry.rank;
      if (rank === RANK_URL && best !== undefined && best.agent.operator === entry.agent.operator) rank = RANK_BOT;
      // Within one word a later match is a longer one; across words only a higher rank wins.
      if (start === bestStart || rank > bestRank) {
        best = entry;
        bestRank = rank;
        bestStart = start;
      }
    }
  };

  return (ua: string): Agent | undefined => {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit, plus two sentinels.
    if (ua.length * 3 + 2 > scratch.length) scratch = new Uint8Array(ua.length * 3 + 2);
    const buf = scratch;
    const length = encoder.encodeInto(ua, buf).written;
    // Sentinels: a separator ends the last word, then a word byte stops the separator loop.
    buf[length] = 0;
    buf[length + 1] = 97;
    best = undefined;
    bestRank = 0;
    bestStart = -1;
    // Hot loop: tables in locals. Module-level and closure bindings compile to context loads
    // that V8 repeats on every byte.
    const fold = FOLD;
    const keys = keyAt;
    const keyShift = shift;
    const slotMask = mask;
    // Where the scan is in a URL: outside, at its host (just after "://"), or in its path.
    let url = OUTSIDE;
    // `^token` must start the header, or follow a leading "www." the scan skips.
    let origin = 0;
    let i = 0;
    for (;;) {
      // Separators. "://" opens a URL; "/" goes on with it, any other run closes it.
      const separatorStart = i;
      while (fold[buf[i]!] === 0) i++;
      if (i > length) break;
      const run = i - separatorStart;
      if (url !== OUTSIDE || run === 3) {
        if (run === 3 && buf[separatorStart] === 58 && buf[separatorStart + 1] === 47 && buf[separatorStart + 2] === 47) url = HOST;
        else if (run > 1 || buf[separatorStart] !== 47) url = OUTSIDE;
      }
      // "www." is no part of a host's name ("https://www.deepcrawl.com/bot", "www.uptimedoctor.com").
      if (fold[buf[i]!] === 119 && fold[buf[i + 1]!] === 119 && fold[buf[i + 2]!] === 119 && buf[i + 3] === DOT && fold[buf[i + 4]!] !== 0) {
        if (i === 0) origin = 4;
        i += 4;
      }
      const start = i;
      // Only a URL's host speaks for the sender; a word of its path is read as any other word
      // ("WPScan (https://wpscan.com/wordpress-security-scanner)" is WPScan, leftmost).
      const inUrl = url === HOST;
      if (inUrl) url = PATH;
      if (isLetter(fold[buf[i]!]!)) {
        // A word that starts with a letter: probe at each family boundary too, a digit, "-",
        // "." or "_" after a letter, or "-", "." or "_" after a digit.
        i++;
        for (;;) {
          while (fold[buf[i]!]! >= 97) i++;
          let folded = fold[buf[i]!]!;
          if (folded === 0) break;
          for (;;) {
            if (i - start >= 2) {
              const key = keyOfWord(buf, start, i);
              let slot = Math.imul(key, 0x9e3779b1) >>> keyShift;
              let found = keys[slot]!;
              while (found !== key && found !== 0) found = keys[(slot = (slot + 1) & slotMask)]!;
              if (found !== 0) probe(headAt[slot]!, buf, length, start, i, wordEnd(buf, i), inUrl, origin);
            }
            // Past the boundary: digits (a boundary again at a "-", "." or "_" after them), then
            // separators, until a letter or the word's end.
            if (isDigit(folded)) {
              do folded = fold[buf[++i]!]!;
              while (isDigit(folded));
              if (folded === 0 || isLetter(folded)) break;
              continue;
            }
            do folded = fold[buf[++i]!]!;
            while (folded !== 0 && !isLetter(folded) && !isDigit(folded));
            if (folded === 0 || isLetter(folded)) break;
            // A digit after a separator is no boundary: skip it and its run.
            do folded = fold[buf[++i]!]!;
            while (isDigit(folded));
            if (folded === 0 || isLetter(folded)) break;
          }
          if (folded === 0) break;
        }
      } else {
        while (fold[buf[i]!] !== 0) i++;
      }
      const key = keyOfWord(buf, start, i);
      let slot = Math.imul(key, 0x9e3779b1) >>> keyShift;
      let found = keys[slot]!;
      while (found !== key && found !== 0) found = keys[(slot = (slot + 1) & slotMask)]!;
      if (found !== 0) {
        probe(headAt[slot]!, buf, length, start, i, i, inUrl, origin);
        if (bestRank === RANK_URL) break;
      }
    }
    // (`best` is set by probe; TypeScript cannot see that through the closure.)
    const found = best as Entry | undefined;
    if (found !== undefined) return found.agent;
    if (!mayMatchPattern(ua)) return undefined;
    for (const { regex, agent } of patterns) {
      if (regex.test(ua)) return agent;
    }
    return undefined;
  };
}

/** ASCII lower-casing of one byte. */
function lower(byte: number): number {
  return byte >= 65 && byte <= 90 ? byte | 0x20 : byte;
}

/** Where the word containing position `from` ends. */
function wordEnd(buf: Uint8Array, from: number): number {
  let i = from;
  while (FOLD[buf[i]!] !== 0) i++;
  return i;
}

/** Whether [from, to) is a version: digits, dots, underscores and hyphens only ("0.5.0", "2024"). */
function onlyVersion(buf: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const folded = FOLD[buf[i]!]!;
    if (!isDigit(folded) && folded !== DOT && folded !== UNDERSCORE && folded !== HYPHEN) return false;
  }
  return true;
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
