// Validates a catalog document at load time, so a bad catalog fails at creation with a message
// naming the agent and the field instead of misidentifying traffic later.
import { robotsTokenProblem } from './robots-token-rules.js';
import { AGENT_TYPES, type Agent, type AgentType, type CatalogDocument } from './types.js';

const TYPE_SET: ReadonlySet<string> = new Set(AGENT_TYPES);
const ID_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

function fail(path: string, expected: string, got: unknown): never {
  throw new TypeError(`catalog ${path}: expected ${expected}, got ${JSON.stringify(got)}`);
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.trim() === '') fail(path, 'a non-empty string', value);
  return value;
}

function optionalStrings(value: unknown, path: string): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) fail(path, 'an array of strings', value);
  value.forEach((item, i) => requireString(item, `${path}[${i}]`));
  return value as string[];
}

function requireUrl(value: unknown, path: string): string {
  const text = requireString(value, path);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(path, 'an absolute URL', value);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(path, 'an http(s) URL', value);
  return text;
}

/** Returns a canonical origin (`https://chatgpt.com`) or undefined when the text is not an http(s) origin. */
export function canonicalOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return url.origin;
}

/**
 * Checks a parsed catalog document: field types, the 17 types, unique ids, unique UA tokens,
 * robots tokens that are product tokens (no hostname, URL, regex syntax or version: see
 * robots-token-rules.ts) and unique, and unique signature-agent origins (all case-insensitive).
 * Pattern compilation is checked when the matcher is compiled.
 * @throws {TypeError} for a missing or mistyped field; {RangeError} for a duplicate or invalid value.
 */
export function validateCatalog(input: unknown): CatalogDocument {
  if (typeof input !== 'object' || input === null) fail('', 'an object', input);
  const doc = input as { version?: unknown; agents?: unknown };
  if (!Array.isArray(doc.agents)) fail('agents', 'an array', doc.agents);
  const ids = new Set<string>();
  const uaTokens = new Map<string, string>();
  const robotsTokens = new Map<string, string>();
  const origins = new Map<string, string>();
  const claim = (seen: Map<string, string>, key: string, id: string, what: string) => {
    const owner = seen.get(key);
    if (owner !== undefined) throw new RangeError(`catalog: ${what} ${JSON.stringify(key)} of agent "${id}" is already used by agent "${owner}"`);
    seen.set(key, id);
  };

  doc.agents.forEach((raw: unknown, index: number) => {
    const at = `agents[${index}]`;
    if (typeof raw !== 'object' || raw === null) fail(at, 'an object', raw);
    const agent = raw as Record<string, unknown>;
    const id = requireString(agent.id, `${at}.id`);
    if (!ID_PATTERN.test(id)) throw new RangeError(`catalog ${at}.id: expected a lower-case slug, got ${JSON.stringify(id)}`);
    if (ids.has(id)) throw new RangeError(`catalog ${at}.id: duplicate id "${id}"`);
    ids.add(id);
    requireString(agent.name, `${at}.name`);
    const type = requireString(agent.type, `${at}.type`);
    if (!TYPE_SET.has(type)) throw new RangeError(`catalog ${at}.type: "${type}" is not one of ${AGENT_TYPES.join(', ')}`);
    requireString(agent.operator, `${at}.operator`);
    requireUrl(agent.url, `${at}.url`);

    if (typeof agent.match !== 'object' || agent.match === null) fail(`${at}.match`, 'an object', agent.match);
    const match = agent.match as Record<string, unknown>;
    const tokens = optionalStrings(match.tokens, `${at}.match.tokens`) ?? [];
    optionalStrings(match.patterns, `${at}.match.patterns`);
    if (match.exact !== undefined && typeof match.exact !== 'boolean') fail(`${at}.match.exact`, 'a boolean', match.exact);
    if (match.layer !== undefined && match.layer !== 'library' && match.layer !== 'platform') fail(`${at}.match.layer`, '"library" or "platform"', match.layer);
    for (const token of tokens) claim(uaTokens, token.toLowerCase(), id, 'match token');

    const robots = optionalStrings(agent.robots_tokens, `${at}.robots_tokens`);
    if (robots === undefined) fail(`${at}.robots_tokens`, 'an array of strings', agent.robots_tokens);
    for (const token of robots) {
      const problem = robotsTokenProblem(token);
      if (problem !== undefined) throw new RangeError(`catalog ${at}.robots_tokens: ${JSON.stringify(token)} is not a robots.txt product token (${problem})`);
      claim(robotsTokens, token.toLowerCase(), id, 'robots token');
    }

    for (const [i, origin] of (optionalStrings(agent.signature_agents, `${at}.signature_agents`) ?? []).entries()) {
      const canonical = canonicalOrigin(origin);
      if (canonical === undefined || canonical !== origin) fail(`${at}.signature_agents[${i}]`, 'a canonical origin such as "https://chatgpt.com"', origin);
      claim(origins, canonical, id, 'signature agent');
    }
    optionalStrings(agent.ip_ranges, `${at}.ip_ranges`);
    for (const [i, suffix] of (optionalStrings(agent.reverse_dns, `${at}.reverse_dns`) ?? []).entries()) {
      if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(suffix)) fail(`${at}.reverse_dns[${i}]`, 'a lower-case host name suffix such as "googlebot.com"', suffix);
    }
    optionalStrings(agent.aliases, `${at}.aliases`);
    optionalStrings(agent.sources, `${at}.sources`);
    if (agent.description !== undefined && typeof agent.description !== 'string') fail(`${at}.description`, 'a string', agent.description);
    if (agent.respects_robots_txt !== undefined && typeof agent.respects_robots_txt !== 'boolean') fail(`${at}.respects_robots_txt`, 'a boolean', agent.respects_robots_txt);
  });

  return { version: typeof doc.version === 'number' ? doc.version : 1, agents: doc.agents as Agent[] };
}

/** Whether a string is one of the 17 agent types. */
export function isAgentType(value: string): value is AgentType {
  return TYPE_SET.has(value);
}
