// RFC 9309 reference matcher for the robots tests, written from the RFC text (not from the renderer).
// §2.1/§2.2: a group is one or more user-agent lines then rules; a user-agent line after a rule
//   starts a new group; blank lines and comments do not end a group; rules before any group are ignored.
// §2.2.1: groups match case-insensitively; all matching groups are merged; "*" only when no
//   specific group matches. The file's values are reduced the way Google's ExtractUserAgent does
//   (leading [A-Za-z_-]* run) — or, for the "literal" flavour, taken whole (the crawler's own matching).
// §2.2.2: longest match (in octets) wins, allow wins ties, no match = allowed, /robots.txt allowed;
//   non-ASCII octets percent-encoded, %xx of unreserved characters decoded, hex upper-cased.
// §2.2.3: "*" matches any sequence, "$" at the end anchors; "#" starts a comment.

interface Rule {
  readonly allow: boolean;
  readonly pattern: string;
}
interface Group {
  readonly agents: string[];
  readonly rules: Rule[];
}
export type Extract = (value: string) => string;

/** Google's ExtractUserAgent: the leading run of ASCII letters, "-" and "_". */
export const googleExtract: Extract = (value) => /^[A-Za-z_-]*/.exec(value)![0];
/** A crawler matching its own documented token: the whole value. */
export const literalExtract: Extract = (value) => value;

function parseFile(text: string): Group[] {
  const groups: Group[] = [];
  let current: Group | undefined;
  let sawRule = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (current === undefined || sawRule) {
        current = { agents: [], rules: [] };
        groups.push(current);
        sawRule = false;
      }
      current.agents.push(value);
    } else if (key === 'allow' || key === 'disallow') {
      if (current === undefined) continue;
      sawRule = true;
      if (value !== '') current.rules.push({ allow: key === 'allow', pattern: value });
    }
  }
  return groups;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
function normalise(text: string): string {
  let out = '';
  for (const octet of new TextEncoder().encode(text)) out += octet < 0x80 ? String.fromCharCode(octet) : `%${octet.toString(16).toUpperCase().padStart(2, '0')}`;
  return out.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

const compiled = new Map<string, RegExp>();
function patternMatches(pattern: string, path: string): boolean {
  let regex = compiled.get(pattern);
  if (regex === undefined) {
    regex = patternRegex(pattern);
    compiled.set(pattern, regex);
  }
  return regex.test(path);
}

function patternRegex(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const source = body.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}${anchored ? '$' : ''}`, 's');
}

/** A parsed robots.txt answering "may this crawler token fetch this path?" per RFC 9309. */
export function referenceRobots(text: string, extract: Extract) {
  const groups = parseFile(text);
  // Index groups by their (extracted, lower-cased) user-agent values: all matching groups merge.
  const byAgent = new Map<string, Rule[]>();
  const global: Rule[] = [];
  for (const group of groups) {
    const rules = group.rules.map((r) => ({ allow: r.allow, pattern: normalise(r.pattern) }));
    for (const key of new Set(group.agents.map((a) => (a === '*' ? '*' : extract(a).toLowerCase())))) {
      if (key === '*') global.push(...rules);
      else if (key !== '') byAgent.set(key, [...(byAgent.get(key) ?? []), ...rules]);
    }
  }
  const targets = new Map<string, string>();
  return {
    isAllowed(path: string, token: string): boolean {
      const rules = byAgent.get(token.toLowerCase()) ?? global;
      let target = targets.get(path);
      if (target === undefined) {
        target = normalise(path);
        targets.set(path, target);
      }
      if (target === '/robots.txt') return true;
      let best: Rule | undefined;
      let bestLength = -1;
      for (const rule of rules) {
        const pattern = rule.pattern;
        if (!patternMatches(pattern, target)) continue;
        if (pattern.length > bestLength || (pattern.length === bestLength && rule.allow)) {
          best = rule;
          bestLength = pattern.length;
        }
      }
      return best === undefined || best.allow;
    },
  };
}

