// RFC 9309 matching: does a robots.txt group allow a path? Longest match wins, Allow wins ties,
// "*" and "$" wildcards, paths and patterns compared in one percent-encoded form (§2.2.2, §2.2.3).

/** One Allow or Disallow line of a group. */
export interface RobotsRule {
  readonly allow: boolean;
  /** The path pattern as written (`/private/`, `*.gif$`). */
  readonly pattern: string;
}

/** The decision for one path: allowed or not, and the rule that decided (undefined when none matched). */
export interface RobotsMatch {
  readonly allowed: boolean;
  readonly rule: RobotsRule | undefined;
}

/** Decides paths against one group's rules. */
export type RobotsMatcher = (path: string) => RobotsMatch;

const HEX = '0123456789ABCDEF';
const encoder = new TextEncoder();
// RFC 3986 §2.3 unreserved characters: a %XX of one of them means the character itself.
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
// Printable ASCII that stays as written; everything else is %XX-encoded as UTF-8 octets.
const PRINTABLE = /^[\x21-\x7e]$/;

function percent(octet: number): string {
  return `%${HEX[octet >> 4]}${HEX[octet & 15]}`;
}

function isHex(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
}

/**
 * The form RFC 9309 §2.2.2 compares in: octets outside US-ASCII (and controls, space) percent-
 * encoded as UTF-8, `%XX` of unreserved characters decoded, other `%XX` with upper-case hex, and a
 * `%` that starts no `%XX` encoded as `%25`. In the query, the gen-delims ":", "/", "@", "[" and "]"
 * are encoded, as the RFC's table does for `/foo/bar?baz=https://foo.bar`. Applied to patterns and
 * to paths alike, so `/caf%C3%A9`, `/café` and `/%63af%c3%a9` are one path.
 * @example
 * normalizeRobotsPath('/foo/bar/%62%61%7A'); // '/foo/bar/baz'
 */
export function normalizeRobotsPath(path: string): string {
  let out = '';
  let inQuery = false;
  for (let i = 0; i < path.length; i++) {
    const char = path[i]!;
    if (char === '%') {
      if (i + 2 < path.length && isHex(path.charCodeAt(i + 1)) && isHex(path.charCodeAt(i + 2))) {
        const octet = parseInt(path.slice(i + 1, i + 3), 16);
        const decoded = String.fromCharCode(octet);
        out += UNRESERVED.test(decoded) ? decoded : percent(octet);
        i += 2;
      } else {
        out += '%25';
      }
      continue;
    }
    if (char === '?') inQuery = true;
    else if (inQuery && (char === ':' || char === '/' || char === '@' || char === '[' || char === ']')) {
      out += percent(char.charCodeAt(0));
      continue;
    }
    if (PRINTABLE.test(char)) {
      out += char;
      continue;
    }
    // A surrogate pair is one code point; a lone surrogate encodes as U+FFFD (TextEncoder).
    const codePoint = path.codePointAt(i)!;
    const text = String.fromCodePoint(codePoint);
    for (const octet of encoder.encode(text)) out += percent(octet);
    i += text.length - 1;
  }
  return out;
}

interface CompiledRule {
  readonly rule: RobotsRule;
  /** Literal parts between "*"s, normalised. */
  readonly parts: readonly string[];
  /** A trailing "$": the match must end at the end of the path (RFC 9309 §2.2.3). */
  readonly anchored: boolean;
  /** Specificity: octets of the normalised pattern (RFC 9309 §2.2.2 "the most octets"). */
  readonly length: number;
}

function compileRule(rule: RobotsRule): CompiledRule | undefined {
  // An empty pattern ("Disallow:") matches nothing (RFC 9309 §2.2.2: the rule is ignored).
  if (rule.pattern === '') return undefined;
  const normalized = normalizeRobotsPath(rule.pattern);
  const anchored = normalized.endsWith('$');
  const body = anchored ? normalized.slice(0, -1) : normalized;
  return { rule, parts: body.split('*'), anchored, length: normalized.length };
}

/**
 * Whether the pattern matches the path from its start. Leftmost matching of each literal part is
 * enough for "*" globs, so this is linear in the path (indexOf), without regular expressions an
 * adversarial pattern could make slow.
 */
function patternMatches(compiled: CompiledRule, path: string): boolean {
  const parts = compiled.parts;
  const first = parts[0]!;
  if (!path.startsWith(first)) return false;
  if (parts.length === 1) return !compiled.anchored || path.length === first.length;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = path.indexOf(parts[i]!, at);
    if (found === -1) return false;
    at = found + parts[i]!.length;
  }
  const last = parts[parts.length - 1]!;
  if (compiled.anchored) return path.length - last.length >= at && path.endsWith(last);
  return path.indexOf(last, at) !== -1;
}

/**
 * Compiles one group's rules into a matcher. The most specific (longest) matching pattern decides;
 * between an Allow and a Disallow of equal length, Allow wins; no match means allowed; `/robots.txt`
 * is always allowed (RFC 9309 §2.2.2).
 * @example
 * const match = compileRobotsRules([{ allow: false, pattern: '/' }, { allow: true, pattern: '/public/' }]);
 * match('/public/a').allowed; // true
 * match('/private').rule; // { allow: false, pattern: '/' }
 */
export function compileRobotsRules(rules: readonly RobotsRule[]): RobotsMatcher {
  if (!Array.isArray(rules)) throw new TypeError(`rules must be an array of { allow, pattern }, got ${String(rules)}`);
  const compiled = rules.map((rule, i) => {
    if (typeof rule?.pattern !== 'string' || typeof rule.allow !== 'boolean') throw new TypeError(`rules[${i}] must be { allow: boolean, pattern: string }`);
    return compileRule(rule);
  }).filter((rule): rule is CompiledRule => rule !== undefined);
  return (path) => {
    const target = normalizeRobotsPath(path);
    if (target === '/robots.txt') return { allowed: true, rule: undefined };
    let best: CompiledRule | undefined;
    for (const rule of compiled) {
      if (best !== undefined && (rule.length < best.length || (rule.length === best.length && !rule.rule.allow))) continue;
      if (patternMatches(rule, target)) best = rule;
    }
    return { allowed: best === undefined || best.rule.allow, rule: best?.rule };
  };
}

/** A parsed robots.txt. */
export interface ParsedRobotsTxt {
  /** The rules that apply to a crawler's product token: every group naming it merged, else the "*" groups. */
  rulesFor(productToken: string): readonly RobotsRule[];
  /** Whether the crawler with this product token may fetch the path. */
  isAllowed(productToken: string, path: string): RobotsMatch;
}

/** One `field: value` line of a robots.txt, its field lower-cased, comment and blanks stripped. */
export interface RobotsTxtRecord {
  readonly field: string;
  readonly value: string;
}

/**
 * The records of robots.txt text, in order; lines without one are skipped. `lenient` also reads
 * what Google's parser accepts beyond RFC 9309: whitespace for the colon (`User-agent GPTBot`).
 */
export function robotsTxtRecords(text: string, lenient = false): RobotsTxtRecord[] {
  const records: RobotsTxtRecord[] = [];
  for (const raw of String(text).split(/\r\n|\r|\n/)) {
    const hash = raw.indexOf('#');
    const line = (hash === -1 ? raw : raw.slice(0, hash)).trim();
    const colon = line.indexOf(':');
    const separator = colon !== -1 || !lenient ? colon : line.search(/\s(?=\S+$)/);
    if (separator === -1) continue;
    records.push({ field: line.slice(0, separator).trim().toLowerCase(), value: line.slice(separator + 1).trim() });
  }
  return records;
}

/**
 * Parses robots.txt text (RFC 9309 §2.1, §2.2.1): groups start with user-agent lines, a user-agent
 * line after a rule starts a new group, comments and unknown lines are skipped, rules before any
 * group are ignored. Groups are matched case-insensitively; all matching groups are merged, and
 * "*" applies only when none matches. Never throws on any text.
 * @example
 * parseRobotsTxt('User-agent: GPTBot\nDisallow: /\n').isAllowed('gptbot', '/a').allowed; // false
 */
export function parseRobotsTxt(text: string): ParsedRobotsTxt {
  const byAgent = new Map<string, RobotsRule[]>();
  const groups: { agents: string[]; rules: RobotsRule[] }[] = [];
  let current: { agents: string[]; rules: RobotsRule[] } | undefined;
  let sawRule = false;
  for (const { field: key, value } of robotsTxtRecords(text)) {
    if (key === 'user-agent') {
      if (current === undefined || sawRule) {
        current = { agents: [], rules: [] };
        groups.push(current);
        sawRule = false;
      }
      current.agents.push(value.toLowerCase());
    } else if (key === 'allow' || key === 'disallow') {
      if (current === undefined) continue;
      sawRule = true;
      current.rules.push({ allow: key === 'allow', pattern: value });
    }
  }
  for (const group of groups) {
    for (const agent of new Set(group.agents)) {
      const rules = byAgent.get(agent);
      if (rules === undefined) byAgent.set(agent, [...group.rules]);
      else rules.push(...group.rules);
    }
  }
  const matchers = new Map<string, RobotsMatcher>();
  const rulesFor = (productToken: string): readonly RobotsRule[] => byAgent.get(productToken.toLowerCase()) ?? byAgent.get('*') ?? [];
  return {
    rulesFor,
    isAllowed(productToken, path) {
      const key = byAgent.has(productToken.toLowerCase()) ? productToken.toLowerCase() : '*';
      let matcher = matchers.get(key);
      if (matcher === undefined) matchers.set(key, (matcher = compileRobotsRules(rulesFor(productToken))));
      return matcher(path);
    },
  };
}
