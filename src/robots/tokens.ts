// Which `User-agent` lines each catalog robots token becomes: the token as its operator documents
// it, plus (for a phrase) its first word, so every parser finds the group.
import type { Catalog } from '../catalog/catalog.js';
import { robotsTokenProblem } from '../catalog/robots-token-rules.js';
import { AGENT_TYPES, type AgentType } from '../catalog/types.js';

/** One group of the output: an agent's robots token, the lines naming it, and what its comments say. */
export interface RobotsGroup {
  readonly type: AgentType;
  readonly agentId: string;
  /** The operator's documentation URL, normalised by the URL parser (ASCII, no line breaks). */
  readonly url: string;
  /** The catalog token this group is for. */
  readonly token: string;
  /** Values of the group's `User-agent` lines: the token first, then its name alias if any. */
  readonly userAgents: readonly string[];
}

// Anything that would end the line or the value early, start a comment, or read as the `*` group.
const UNWRITABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029#*]/;

/** The first word of a phrase token: `Linguee Bot` → `Linguee` (a "/" is cut too, for hand-made catalogs). */
export function tokenName(token: string): string {
  return token.split(/[ /]/, 1)[0]!;
}

// robots-parser's key for a User-agent value: lower-cased, cut at the first "/", trimmed.
function parserKey(value: string): string {
  const lower = value.toLowerCase();
  const slash = lower.indexOf('/');
  return (slash === -1 ? lower : lower.slice(0, slash)).trim();
}

function compareTokens(a: RobotsGroup, b: RobotsGroup): number {
  const x = a.token.toLowerCase();
  const y = b.token.toLowerCase();
  if (x !== y) return x < y ? -1 : 1;
  return a.token < b.token ? -1 : a.token > b.token ? 1 : 0;
}

/**
 * Builds the groups of every agent, per type in display order, each type's groups sorted by token
 * (case-insensitively, then by code point, so the order never depends on the platform's locale).
 *
 * Tokens that are not RFC 9309 product tokens are written as documented, because that is what the
 * crawler itself matches. A phrase (`Linguee Bot`, `ChatGPT Agent`) also gets a second
 * `User-agent` line in the same group with its first word (`Linguee`), unless another catalog
 * token, or another token's name, already reads as that name (case-insensitively, or as
 * robots-parser keys it), or another agent's token contains it: the alias then could block an
 * agent nobody chose.
 * @throws {RangeError} when a robots token cannot be written safely (line break, "#", "*", blank or padded) or is not a product token (a hostname, URL, regex syntax or version: robots-token-rules.ts).
 */
export function compileRobotsGroups(catalog: Catalog): ReadonlyMap<AgentType, readonly RobotsGroup[]> {
  const claimed = new Map<string, number>();
  const claim = (key: string) => claimed.set(key, (claimed.get(key) ?? 0) + 1);
  for (const agent of catalog.agents) {
    for (const token of agent.robots_tokens) {
      // A catalog compiled by createCatalog has passed the same rule; a hand-made Catalog may not.
      const problem = UNWRITABLE.test(token) ? 'a line break, "#" or "*"' : robotsTokenProblem(token);
      if (problem !== undefined) {
        throw new RangeError(`catalog agent "${agent.id}": robots token ${JSON.stringify(token)} cannot be written as a User-agent line (${problem})`);
      }
      const keys = new Set([token.toLowerCase(), parserKey(token)]);
      const name = tokenName(token);
      if (name !== token && name !== '') keys.add(name.toLowerCase());
      for (const key of keys) claim(key);
    }
  }
  // Parsers that match a User-agent value anywhere inside a crawler's name (Python's
  // urllib.robotparser, Scrapy's Protego) would apply a name found inside another agent's token to
  // that agent too: `e` (of `e Investment Crawler`) to nearly every crawler, `ChatGPT` to ChatGPT-User.
  const lowerTokens = catalog.agents.flatMap((agent) => agent.robots_tokens.map((token) => ({ agentId: agent.id, lower: token.toLowerCase() })));
  const insideAnotherAgents = (name: string, agentId: string): boolean => {
    const lower = name.toLowerCase();
    return lowerTokens.some((other) => other.agentId !== agentId && other.lower.includes(lower));
  };
  const groups = new Map<AgentType, RobotsGroup[]>();
  for (const type of AGENT_TYPES) {
    const list: RobotsGroup[] = [];
    for (const agent of catalog.agentsOfType(type)) {
      const url = new URL(agent.url).href;
      for (const token of agent.robots_tokens) {
        const name = tokenName(token);
        // The token itself claimed its name once; a second claim is another agent's token or name.
        const alias = name !== token && name !== '' && claimed.get(name.toLowerCase()) === 1 && !insideAnotherAgents(name, agent.id);
        list.push({ type, agentId: agent.id, url, token, userAgents: alias ? [token, name] : [token] });
      }
    }
    groups.set(type, list.sort(compareTokens));
  }
  return groups;
}

/**
 * For each group, the other groups one of whose `User-agent` values is found inside its token
 * (case-insensitively): under a parser that applies the first group whose value is inside a
 * crawler's name, those would catch this group's crawler if written before its own group. Found by
 * looking up every piece of each token, so the cost is the tokens' lengths, not the groups squared.
 */
export function groupsInsideToken(groups: ReadonlyMap<AgentType, readonly RobotsGroup[]>): ReadonlyMap<RobotsGroup, ReadonlySet<RobotsGroup>> {
  const all = [...groups.values()].flat();
  const byValue = new Map<string, RobotsGroup[]>();
  for (const group of all) {
    for (const value of group.userAgents) {
      const key = value.toLowerCase();
      const list = byValue.get(key);
      if (list === undefined) byValue.set(key, [group]);
      else list.push(group);
    }
  }
  const inside = new Map<RobotsGroup, Set<RobotsGroup>>();
  for (const group of all) {
    const token = group.token.toLowerCase();
    for (let start = 0; start < token.length; start++) {
      for (let end = start + 1; end <= token.length; end++) {
        for (const other of byValue.get(token.slice(start, end)) ?? []) {
          if (other === group) continue;
          let set = inside.get(group);
          if (set === undefined) inside.set(group, (set = new Set()));
          set.add(other);
        }
      }
    }
  }
  return inside;
}
