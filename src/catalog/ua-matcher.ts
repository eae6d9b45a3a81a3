// Compiles every agent's User-Agent tokens into one matcher that makes a single pass over the
// header's bytes, walking each word through a trie of the tokens' leading words as it goes
// (data/README.md "Matching rules").
import { attackProbeIn, PAYLOAD_BYTES, PAYLOAD_WORDS } from './attack-probe.js';
import type { Agent, AgentLayer } from './types.js';
import { carriesForeignUrl } from './borrowed-token.js';
import { declaredBot, NOTED_WORDS, productVersionedBy, unlistedAgent } from './unlisted-agent.js';
import { DOT, FOLD, fusedVersionAt, isDigit, onlyVersion, versionTail } from './word-bytes.js';

/** A function from a User-Agent header value to the agent it names, if any. */
export type UserAgentMatcher = (userAgent: string) => Agent | undefined;

const isLetter = (folded: number): boolean => folded >= 97;
const isAlphanumeric = (folded: number): boolean => isLetter(folded) || isDigit(folded);

// How strongly a match names the sender (data/README.md): a bot's own token inside its contact
// URL beats a product token it borrows ("Googlebot/2.1 ... +https://deepcrawl.com/bot" is
// DeepCrawl); any bot beats the library it is built with, which beats the platform it runs on.
const RANK_URL = 4;
const RANK_BOT = 3;
const LAYER_RANK: Readonly<Record<AgentLayer, number>> = { library: 2, platform: 1 };

// The scan's input classes: 0 for a separator no browser sends but attack payloads do
// (attack-probe.ts), 1 for any other separator, then one class per folded word byte.
const CLASS = new Uint8Array(256);
const CLASS_OF_FOLDED = new Uint8Array(128);
const PAYLOAD_CLASS = 0;
const SEPARATOR_CLASS = 1;
let classCount = 2;
for (let folded = 0; folded < 128; folded++) if (FOLD[folded] === folded && folded !== 0) CLASS_OF_FOLDED[folded] = classCount++;
for (let byte = 0; byte < 256; byte++) CLASS[byte] = FOLD[byte] === 0 ? SEPARATOR_CLASS : CLASS_OF_FOLDED[FOLD[byte]!]!;
for (const byte of PAYLOAD_BYTES) CLASS[byte] = PAYLOAD_CLASS;
const CLASSES = classCount;
const FOLDED_OF_CLASS = new Uint8Array(CLASSES);
for (let folded = 0; folded < 128; folded++) if (CLASS_OF_FOLDED[folded] !== 0) FOLDED_OF_CLASS[CLASS_OF_FOLDED[folded]!] = folded;
const W = CLASS_OF_FOLDED[119]!;
/** The bytes of "www.", whose four steps the automaton skips at a word's start. */
const WWW_DOT = [119, 119, 119, DOT] as const;
const DOT_CLASS = CLASS_OF_FOLDED[DOT]!;
const SLASH = 47;
const STAR = 42;
// Letters have the highest classes, as they have the highest folded bytes.
const FIRST_LETTER_CLASS = CLASS_OF_FOLDED[97]!;

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
  /** A product token, its word and "/" (`Hexometer/`): it also matches a header that is only its word, with or without a version. */
  readonly product: boolean;
}

const encoder = new TextEncoder();
// Scratch space for the header's bytes. Matching is synchronous, so one buffer per module is
// safe; it grows for unusually long headers, and is kept only up to RETAINED_LENGTH (a longer
// header's, some 39 bytes a character, is dropped after its match). Scanning a Uint8Array is
// markedly faster in V8 than charCodeAt, and TextEncoder.encodeInto is a native bulk copy.
const RETAINED_LENGTH = 16 * 1024;
let scratch = new Uint8Array(1024);
// Where the scan met a word worth checking, and the state it was in there (see the matcher).
let candidateAt = new Int32Array(scratch.length);
let candidateState = new Int32Array(scratch.length);
// Where words ending in a bot word end, in header order, and how many (unlisted agents).
let botWordEnds = new Int32Array(scratch.length);
let botWordCount = 0;
// Whether the scan met a payload byte or word (attack-probe.ts).
let payloadSeen = false;

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
  const rest = bytes.subarray(split);
  return { agent, rank, word: bytes.subarray(0, split), rest, atStart, atEnd, exact, product: rest.length === 1 && rest[0] === SLASH && !atEnd };
}

/**
 * Where a token's `rest` ends when it follows in buf at `at`, verbatim (lower-cased) but for a "*",
 * which takes a version (a digit, then digits and dots: "/* facebot" over "/1.1 Facebot"); -1 when
 * it does not follow.
 */
function restEnd(buf: Uint8Array, at: number, length: number, rest: Uint8Array): number {
  let i = at;
  for (let j = 0; j < rest.length; j++) {
    if (rest[j] === STAR) {
      if (i >= length || !isDigit(FOLD[buf[i]!]!)) return -1;
      while (i < length && (isDigit(FOLD[buf[i]!]!) || buf[i] === DOT)) i++;
    } else if (i < length && lower(buf[i]!) === rest[j]) i++;
    else return -1;
  }
  return i;
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
 * when no token matched. With `unlisted`, a bot the header names but the agents do not
 * (unlisted-agent.ts) is returned when nothing matched, and over a matched library or platform;
 * and an attack payload (attack-probe.ts) over anything but a Security Scanner naming itself.
 * @throws {RangeError} when a token is malformed or a pattern does not compile.
 */
export function compileUserAgentMatcher(agents: readonly Agent[], { unlisted = false }: { readonly unlisted?: boolean } = {}): UserAgentMatcher {
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

  const { table, firstTerminal, afterPayload, depthOf, entriesFrom, byWord, endsInBotWord, startsPayload } = compileAutomaton(entries, unlisted ? NOTED_WORDS : [], unlisted ? PAYLOAD_WORDS : []);
  const mayMatchPattern = compilePatternPrefilter(patterns.map(({ regex }) => regex.source));

  // The best match so far, shared with matchAt (matching is synchronous).
  let best: Entry | undefined;
  let bestRank = 0;
  let bestStart = -1;
  let bestStop = -1;

  /**
   * Checks the tokens whose leading word is the word of terminal state `state` (a row offset),
   * that word ending at `end` of buf: the header's end or a separator (a whole word), or a
   * family boundary; records a better match.
   */
  const matchAt = (state: number, buf: Uint8Array, length: number, end: number): void => {
    const index = (state / CLASSES) | 0;
    const folded = FOLD[buf[end]!]!;
    // A word ending in a bot word or a URL word ("http", "www"), or a URL's page named for a bot
    // ("bot.html"), or a bot word before a fused version ("hitcrawler_0.1"), for unlisted agents.
    if (endsInBotWord[index] === 1 && (folded === 0 || folded === DOT || fusedVersionAt(buf, end))) botWordEnds[botWordCount++] = end;
    if (startsPayload[index] === 1) payloadSeen = true;
    if (entriesFrom[index] === entriesFrom[index + 1]) return;
    const start = end - depthOf[index]!;
    let wordEnd = end;
    if (folded !== 0) {
      // A family boundary: inside a word that holds a letter before it (a name, "Baiduspider" or
      // "360Spider", not a number such as a version's), past its first two bytes; "-", "." or "_"
      // after a letter or digit, or a digit after a letter.
      if (end - start < 2 || !hasLetter(buf, start, end)) return;
      const before = FOLD[buf[end - 1]!]!;
      if (isDigit(folded) ? !isLetter(before) : !isAlphanumeric(before)) return;
      // "www." starting a word before a word byte is skipped, never read as the word "www".
      if (end - start === 3 && folded === DOT && FOLD[buf[end + 1]!] !== 0 && startsWithWww(buf, start) && (start === 0 || FOLD[buf[start - 1]!] === 0)) return;
      wordEnd = end + 1;
      while (FOLD[buf[wordEnd]!] !== 0) wordEnd++;
    }
    let inUrl: boolean | undefined;
    // The header is this word alone, with at most a version after it ("Hexometer", "Geziyor 1.0",
    // "Mnogosearch-3.1.21"): a product token ("Hexometer/") needs no "/" then.
    const alone = start <= 4 && start === headerStart(buf) && versionTail(buf, end, length);
    for (let k = entriesFrom[index]!; k < entriesFrom[index + 1]!; k++) {
      const entry = byWord[k]!;
      const { rest } = entry;
      if (entry.atStart && start !== headerStart(buf)) continue;
      let stop = end;
      if (alone && entry.product) stop = length;
      else if (end < wordEnd) {
        // A family member: no rest may follow, and a digit boundary only before a version
        // (as any boundary of an exact token: `Applebot_2` but not `Applebot-like`).
        if (rest.length > 0) continue;
        const digit = isDigit(folded);
        if ((digit || entry.exact) && !onlyVersion(buf, digit ? end : end + 1, wordEnd)) continue;
        stop = wordEnd;
      } else if (rest.length > 0) {
        stop = restEnd(buf, end, length, rest);
        if (stop < 0) continue;
        // A rest ending inside a word must end the word there or at a family boundary
        // ("Nmap Scripting Engine;" and "pinterest.com/bot.html", not "...Enginex").
        if (FOLD[rest[rest.length - 1]!] !== 0 && isAlphanumeric(FOLD[buf[stop]!]!)) continue;
      }
      if (entry.atEnd && stop !== length) continue;
      // A URL outranks only a token borrowed from another operator: an operator's product
      // token and its own site in one header are read left to right as usual.
      let rank = entry.rank;
      if (rank === RANK_BOT && (inUrl ??= isUrlHost(buf, start))) rank = RANK_URL;
      if (rank === RANK_URL && best !== undefined && best.agent.operator === entry.agent.operator) rank = RANK_BOT;
      // Within one word the longer match wins (a later one when as long); across words only a higher rank wins.
      if ((start === bestStart && stop >= bestStop) || rank > bestRank) {
        best = entry;
        bestRank = rank;
        bestStart = start;
        bestStop = stop;
      }
    }
  };

  const match = (ua: string): Agent | undefined => {
    // UTF-8 needs at most 3 bytes per UTF-16 code unit, plus a sentinel.
    if (ua.length * 3 + 1 > scratch.length) {
      scratch = new Uint8Array(ua.length * 3 + 1);
      candidateAt = new Int32Array(scratch.length);
      candidateState = new Int32Array(scratch.length);
      botWordEnds = new Int32Array(scratch.length);
    }
    const buf = scratch;
    const length = encoder.encodeInto(ua, buf).written;
    // Sentinel: a separator ends the last word.
    buf[length] = 0;
    best = undefined;
    bestRank = 0;
    bestStart = -1;
    bestStop = -1;
    botWordCount = 0;
    // Two walks over the header's halves, interleaved: each table load depends on the one
    // before it in its walk, so one walk waits on every load while two overlap theirs (more
    // walks measured no faster: their registers spill). The second starts at a separator, where
    // the state is "between words" whatever came before; the first ends on that separator.
    const half = separatorFrom(buf, length >> 1);
    // Hot loops: tables in locals (module-level and closure bindings compile to context loads
    // that V8 repeats on every byte). A terminal state before a byte that is no letter (a
    // separator or a possible family boundary), and the state after a payload byte before any
    // byte, is noted in the walk's own slots, to be checked
    // in header order below: [0, half) for the first walk, [half, length) for the second (a
    // walk notes at most one per byte it reads after its first).
    const classOf = CLASS;
    const next = table;
    const terminal = firstTerminal;
    const payloadState = afterPayload;
    const firstLetter = FIRST_LETTER_CLASS;
    const at = candidateAt;
    const from = candidateState;
    let first = 0;
    let second = 0;
    let firstNoted = 0;
    let secondNoted = half;
    const together = Math.min(half, length - half);
    for (let k = 0; k < together; k++) {
      const c1 = classOf[buf[k]!]!;
      const c2 = classOf[buf[half + k]!]!;
      if (first >= terminal && (c1 < firstLetter || first === payloadState)) (at[firstNoted] = k), (from[firstNoted++] = first);
      if (second >= terminal && (c2 < firstLetter || second === payloadState)) (at[secondNoted] = half + k), (from[secondNoted++] = second);
      first = next[first + c1]!;
      second = next[second + c2]!;
    }
    for (let i = together; i <= half; i++) {
      const c = classOf[buf[i]!]!;
      if (first >= terminal && (c < firstLetter || first === payloadState)) (at[firstNoted] = i), (from[firstNoted++] = first);
      first = next[first + c]!;
    }
    for (let i = half + together; i <= length; i++) {
      const c = classOf[buf[i]!]!;
      if (second >= terminal && (c < firstLetter || second === payloadState)) (at[secondNoted] = i), (from[secondNoted++] = second);
      second = next[second + c]!;
    }
    payloadSeen = false;
    for (let j = 0; j < firstNoted; j++) matchAt(from[j]!, buf, length, at[j]!);
    for (let j = half; j < secondNoted; j++) matchAt(from[j]!, buf, length, at[j]!);
    // (`best` is set by matchAt; TypeScript cannot see that through the closure.)
    const found = best as Entry | undefined;
    // An attack payload names the attack, whatever product the header borrows, unless a scanner
    // names itself beside it.
    if (unlisted && payloadSeen && !(found !== undefined && bestRank >= RANK_BOT && found.agent.type === 'Security Scanner')) {
      const probe = attackProbeIn(ua);
      if (probe !== undefined) return probe;
    }
    if (found !== undefined) {
      if (!unlisted || bestRank > RANK_BOT) return found.agent;
      if (bestRank === RANK_BOT) {
        // A verifiable crawler's token beside someone else's URL and that sender's own name is
        // borrowed: the sender is named ("Googlebot/2.1; startmebot/1.0; +https://start.me/bot").
        if (!carriesForeignUrl(ua, found.agent)) return found.agent;
        const sender = declaredBot(ua, buf, length, botWordEnds, botWordCount, bestStart, true);
        return sender === undefined || sender.described === true ? found.agent : unlistedAgent(sender);
      }
      // A library as the leading product's version ("AcmeCrawl/Nutch-1.0") is its engine.
      const engineUser = buf[bestStart - 1] === SLASH ? productVersionedBy(buf, length, bestStart) : undefined;
      if (engineUser !== undefined) return unlistedAgent(engineUser);
      // A bot that names itself beats the listed library or platform it runs on.
      const declared = botWordCount === 0 ? undefined : declaredBot(ua, buf, length, botWordEnds, botWordCount, bestStart, false);
      return declared === undefined || declared.described === true ? found.agent : unlistedAgent(declared);
    }
    if (mayMatchPattern(ua)) {
      for (const { regex, agent } of patterns) {
        if (regex.test(ua)) return agent;
      }
    }
    if (!unlisted) return undefined;
    const declared = declaredBot(ua, buf, length, botWordEnds, botWordCount, -1, true);
    return declared === undefined ? undefined : unlistedAgent(declared);
  };
  return (ua: string): Agent | undefined => {
    if (ua.length <= RETAINED_LENGTH) return match(ua);
    const kept = [scratch, candidateAt, candidateState, botWordEnds] as const;
    try {
      return match(ua);
    } finally {
      [scratch, candidateAt, candidateState, botWordEnds] = kept;
    }
  };
}

/** The scan's automaton: a transition table over byte classes and what its terminal states mean. */
interface Automaton {
  /** Row offsets (state × CLASSES): `table[state + class]` is the next state. */
  readonly table: Int32Array;
  /** The row offset of the first terminal state; every later state is terminal. */
  readonly firstTerminal: number;
  /** The row offset of the state after a payload byte (a terminal one, noted before any byte). */
  readonly afterPayload: number;
  /** Per state index: the length of its word (bytes since the word's start, after a skipped "www."). */
  readonly depthOf: Int32Array;
  /** Per state index: where its tokens start in `byWord` (they end where the next state's start). */
  readonly entriesFrom: Int32Array;
  /** The entries grouped by leading word, each group in catalog order. */
  readonly byWord: readonly Entry[];
  /** Per state index: 1 when the bytes read so far end in a bot word (unlisted agents), else 0. */
  readonly endsInBotWord: Uint8Array;
  /** Per state index: 1 when the word read so far is a payload word (attack-probe.ts), else 0. */
  readonly startsPayload: Uint8Array;
}

/**
 * The Aho-Corasick automaton of the bot words, over folded letters: `next[state * 26 + letter]`,
 * and whether the bytes read end in one of the words. Any other word byte goes back to state 0.
 */
function compileBotWordAutomaton(words: readonly string[]): { next: Int32Array; accepts: Uint8Array; count: number } {
  const children: Map<number, number>[] = [new Map()];
  const accepts: number[] = [0];
  for (const word of words) {
    let state = 0;
    for (const ch of word) {
      const letter = ch.charCodeAt(0) - 97;
      let child = children[state]!.get(letter);
      if (child === undefined) {
        child = children.length;
        children.push(new Map());
        accepts.push(0);
        children[state]!.set(letter, child);
      }
      state = child;
    }
    accepts[state] = 1;
  }
  const count = children.length;
  const next = new Int32Array(count * 26);
  const fail = new Int32Array(count);
  // Breadth first, so a state's failure state is complete before its children need it.
  const queue: number[] = [];
  for (let letter = 0; letter < 26; letter++) {
    const child = children[0]!.get(letter);
    if (child !== undefined) queue.push(child);
    next[letter] = child ?? 0;
  }
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    accepts[state] ||= accepts[fail[state]!]!;
    for (let letter = 0; letter < 26; letter++) {
      const child = children[state]!.get(letter);
      if (child === undefined) next[state * 26 + letter] = next[fail[state]! * 26 + letter]!;
      else {
        fail[child] = next[fail[state]! * 26 + letter]!;
        next[state * 26 + letter] = child;
        queue.push(child);
      }
    }
  }
  return { next, accepts: Uint8Array.from(accepts), count };
}

/**
 * Builds the automaton the scan runs: its states are "between words" (0), "in a word no token
 * starts" (1, and with bot words one such state per position in them), a node of the trie of the
 * tokens' leading words, and the four steps of a word starting "www." (skipped when a word byte
 * follows, so the word restarts there). Every state also knows how much of a bot word the bytes
 * read end in, so a word ending in one ("AcmeBot") reaches a terminal state and is noted like a
 * token's word, at no cost to the scan. The payload words (attack-probe.ts) join the trie without
 * tokens, so that meeting one is noted too. Terminal states (some token's or payload word, or a
 * bot word's end) are numbered last.
 */
function compileAutomaton(entries: readonly Entry[], botWords: readonly string[], payloadWords: readonly string[]): Automaton {
  // The trie: node 0 is the root; `child` maps node * CLASSES + class to a child's number.
  const payloadBytes = payloadWords.map((word) => encoder.encode(word));
  let capacity = 1;
  for (const word of [...entries.map((entry) => entry.word), ...payloadBytes]) capacity += word.length;
  const child = new Map<number, number>();
  const depth = new Int32Array(capacity);
  const parent = new Int32Array(capacity);
  const classInParent = new Uint8Array(capacity);
  const tokensAt = new Map<number, number[]>();
  let nodes = 1;
  /** The trie node of a word, added with its missing ancestors. */
  const insert = (word: Uint8Array): number => {
    let node = 0;
    for (const byte of word) {
      const key = node * CLASSES + CLASS[byte]!;
      let next = child.get(key);
      if (next === undefined) {
        next = nodes++;
        child.set(key, next);
        depth[next] = depth[node]! + 1;
        parent[next] = node;
        classInParent[next] = CLASS[byte]!;
      }
      node = next;
    }
    return node;
  };
  entries.forEach((entry, index) => {
    const node = insert(entry.word);
    const tokens = tokensAt.get(node);
    if (tokens === undefined) tokensAt.set(node, [index]);
    else tokens.push(index);
  });
  const payloadNodes = new Set(payloadBytes.map(insert));
  // The "www." steps 1..4: the trie node each prefix reaches (-1 for none).
  const www = [-1];
  for (let step = 1, node = 0; step <= 4; step++) {
    node = node < 0 ? -1 : (child.get(node * CLASSES + CLASS[WWW_DOT[step - 1]!]!) ?? -1);
    www.push(node);
  }

  // How much of a bot word each trie node's and "www." step's bytes end in.
  const bots = compileBotWordAutomaton(botWords);
  const botStep = (at: number, byteClass: number): number => {
    const folded = FOLDED_OF_CLASS[byteClass]!;
    return folded >= 97 ? bots.next[at * 26 + folded - 97]! : 0;
  };
  const botOfNode = new Int32Array(nodes);
  // A child is numbered after its parent, so one pass in order sees every parent first.
  for (let node = 1; node < nodes; node++) botOfNode[node] = botStep(botOfNode[parent[node]!]!, classInParent[node]!);
  const botOfWww = [0];
  for (let step = 1; step <= 4; step++) botOfWww.push(botStep(botOfWww[step - 1]!, CLASS[WWW_DOT[step - 1]!]!));

  // State indices: 0 between words, 1 dead (a word no token starts, ending in no part of a bot
  // word), then the other dead states (one per bot-word position), trie nodes and "www." steps;
  // terminal ones (a node some token's word ends at, or bytes ending in a bot word) last.
  const stateOfNode = new Int32Array(nodes);
  const stateOfWww = [0, 0, 0, 0, 0];
  const stateOfDead = new Int32Array(bots.count);
  stateOfDead[0] = 1;
  const nodeIsTerminal = (node: number) => tokensAt.has(node) || payloadNodes.has(node) || bots.accepts[botOfNode[node]!] === 1;
  const wwwIsTerminal = (step: number) => tokensAt.has(www[step]!) || bots.accepts[botOfWww[step]!] === 1;
  let states = 2;
  for (let node = 1; node < nodes; node++) if (!nodeIsTerminal(node)) stateOfNode[node] = states++;
  for (let step = 1; step <= 4; step++) if (!wwwIsTerminal(step)) stateOfWww[step] = states++;
  for (let at = 1; at < bots.count; at++) if (bots.accepts[at] === 0) stateOfDead[at] = states++;
  const firstTerminal = states;
  const nodeOfState: number[] = [];
  for (let node = 1; node < nodes; node++) if (nodeIsTerminal(node)) nodeOfState[(stateOfNode[node] = states++)] = node;
  for (let step = 1; step <= 4; step++) if (wwwIsTerminal(step)) nodeOfState[(stateOfWww[step] = states++)] = www[step]!;
  for (let at = 1; at < bots.count; at++) if (bots.accepts[at] === 1) stateOfDead[at] = states++;
  // Between words after a payload byte: terminal, so that the scan notes it (attack-probe.ts).
  const afterPayload = states++;

  // Every word byte leads to the dead state of the bot-word position it reaches and a separator
  // back between words (0), except along the trie's edges: from a node's state, the between-words
  // state (the root's children) and the "www." steps (the children of the node each has reached;
  // after "www." the root's).
  const table = new Int32Array(states * CLASSES);
  const botOfState = new Int32Array(states);
  for (let node = 1; node < nodes; node++) botOfState[stateOfNode[node]!] = botOfNode[node]!;
  for (let step = 1; step <= 4; step++) botOfState[stateOfWww[step]!] = botOfWww[step]!;
  for (let at = 1; at < bots.count; at++) botOfState[stateOfDead[at]!] = at;
  for (let state = 0; state < states; state++) {
    for (let byteClass = SEPARATOR_CLASS + 1; byteClass < CLASSES; byteClass++) table[state * CLASSES + byteClass] = stateOfDead[botStep(botOfState[state]!, byteClass)]! * CLASSES;
  }
  for (let node = 1; node < nodes; node++) {
    const from = parent[node]!;
    const target = stateOfNode[node]! * CLASSES;
    const byteClass = classInParent[node]!;
    if (from === 0) {
      table[byteClass] = target;
      table[stateOfWww[4]! * CLASSES + byteClass] = target;
    } else {
      table[stateOfNode[from]! * CLASSES + byteClass] = target;
    }
    for (let step = 1; step <= 3; step++) if (from === www[step]) table[stateOfWww[step]! * CLASSES + byteClass] = target;
  }
  table[W] = stateOfWww[1]! * CLASSES;
  table[stateOfWww[1]! * CLASSES + W] = stateOfWww[2]! * CLASSES;
  table[stateOfWww[2]! * CLASSES + W] = stateOfWww[3]! * CLASSES;
  table[stateOfWww[3]! * CLASSES + DOT_CLASS] = stateOfWww[4]! * CLASSES;
  // A payload byte is a separator that leads to afterPayload, whose row is the between-words one.
  table.copyWithin(afterPayload * CLASSES, 0, CLASSES);
  for (let state = 0; state < states; state++) table[state * CLASSES + PAYLOAD_CLASS] = afterPayload * CLASSES;

  const depthOf = new Int32Array(states);
  const entriesFrom = new Int32Array(states + 1);
  const endsInBotWord = new Uint8Array(states);
  const startsPayload = new Uint8Array(states);
  const byWord: Entry[] = [];
  for (let node = 1; node < nodes; node++) depthOf[stateOfNode[node]!] = depth[node]!;
  for (let step = 1; step <= 4; step++) depthOf[stateOfWww[step]!] = step;
  for (let state = 0; state < states; state++) {
    endsInBotWord[state] = bots.accepts[botOfState[state]!]!;
    if (state === afterPayload || (state >= firstTerminal && payloadNodes.has(nodeOfState[state] ?? -1))) startsPayload[state] = 1;
    entriesFrom[state] = byWord.length;
    if (state >= firstTerminal) for (const entry of tokensAt.get(nodeOfState[state] ?? -1) ?? []) byWord.push(entries[entry]!);
  }
  entriesFrom[states] = byWord.length;
  return { table, firstTerminal: firstTerminal * CLASSES, afterPayload: afterPayload * CLASSES, depthOf, entriesFrom, byWord, endsInBotWord, startsPayload };
}

/** The first separator at or after `from` (the header's sentinel at the latest). */
function separatorFrom(buf: Uint8Array, from: number): number {
  let i = from;
  while (FOLD[buf[i]!] !== 0) i++;
  return i;
}

/** Where the header's first word starts: after a leading "www." that a word byte follows. */
function headerStart(buf: Uint8Array): number {
  return startsWithWww(buf, 0) && FOLD[buf[4]!] !== 0 ? 4 : 0;
}

/** Whether buf holds "www." (any case) from `start`. */
function startsWithWww(buf: Uint8Array, start: number): boolean {
  return FOLD[buf[start]!] === 119 && FOLD[buf[start + 1]!] === 119 && FOLD[buf[start + 2]!] === 119 && buf[start + 3] === DOT;
}

/**
 * Whether the word starting at `start` (after any skipped "www.") is a URL's host: it follows a
 * separator run that is exactly "://". Only a URL's host speaks for the sender; a word of its
 * path is read as any other word ("WPScan (https://wpscan.com/wordpress-security-scanner)").
 */
function isUrlHost(buf: Uint8Array, start: number): boolean {
  let from = start;
  if (from >= 4 && startsWithWww(buf, from - 4) && (from === 4 || FOLD[buf[from - 5]!] === 0)) from -= 4;
  return from >= 3 && buf[from - 3] === 58 && buf[from - 2] === 47 && buf[from - 1] === 47 && (from === 3 || FOLD[buf[from - 4]!] !== 0);
}

/** Whether buf[start, end) holds a letter; a name's word mostly starts with one, which ends the look at once. */
function hasLetter(buf: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (isLetter(FOLD[buf[i]!]!)) return true;
  return false;
}

/** ASCII lower-casing of one byte. */
function lower(byte: number): number {
  return byte >= 65 && byte <= 90 ? byte | 0x20 : byte;
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
