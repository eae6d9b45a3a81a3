// The compiled catalog: validated once, then lookup maps and the UA matcher built up front.
import { attackProbeInRequest } from './attack-probe.js';
import { compileUserAgentMatcher } from './ua-matcher.js';
import { unlistedAgentById } from './unlisted-agent.js';
import { canonicalOrigin, validateCatalog } from './validate.js';
import { AGENT_TYPES, AGENT_TYPE_ALIASES, type Agent, type AgentType, type CatalogDocument } from './types.js';

/** A validated, compiled catalog. */
export interface Catalog {
  readonly version: number;
  readonly agents: readonly Agent[];
  /** The agent with this id, if any: a listed one, or an unlisted one (`unlisted:DCPbot`, `probe:log4shell`) when the catalog names those. */
  getAgent(id: string): Agent | undefined;
  /** Agents of one type, in catalog order. */
  agentsOfType(type: AgentType): readonly Agent[];
  /** The agent a User-Agent header names, if any (an unlisted one when nothing listed is and the catalog names those). */
  matchUserAgent(userAgent: string): Agent | undefined;
  /** The agent whose Web Bot Auth origin this is (any URL on that origin), if any. */
  matchSignatureAgent(url: string): Agent | undefined;
  /**
   * The attack probe a request's other headers or its path carry (a Log4Shell lookup, a
   * Shellshock function), when the catalog names unlisted agents; see data/README.md "Attack probes".
   * Optional, so that a hand-made catalog object without it still serves.
   */
  matchRequestProbe?(headers: ReadonlyMap<string, string>, path?: string): Agent | undefined;
}

/** How a catalog is compiled. */
export interface CatalogOptions {
  /**
   * Name bots the document does not list but whose User-Agent says what they are ("DCPbot/1.0")
   * as unlisted agents (type Uncategorized unless their word says more; ids `unlisted:<token>`).
   * Default true; false leaves such headers unknown.
   */
  readonly unlistedAgents?: boolean;
}

/**
 * Validates a catalog document and compiles its lookups.
 * @throws {TypeError | RangeError} when the document is invalid (the message names the field).
 * @example
 * const catalog = createCatalog(JSON.parse(readFileSync('my-agents.json', 'utf8')));
 * catalog.matchUserAgent('Mozilla/5.0 (compatible; GPTBot/1.2)')?.id; // "gptbot"
 */
export function createCatalog(document: unknown, options: CatalogOptions = {}): Catalog {
  const doc: CatalogDocument = validateCatalog(document);
  const unlisted = options.unlistedAgents ?? true;
  if (typeof unlisted !== 'boolean') throw new TypeError(`unlistedAgents must be a boolean, got ${JSON.stringify(unlisted)}`);
  const byId = new Map<string, Agent>();
  const byType = new Map<AgentType, Agent[]>(AGENT_TYPES.map((type) => [type, []]));
  const byOrigin = new Map<string, Agent>();
  for (const agent of doc.agents) {
    byId.set(agent.id, agent);
    byType.get(agent.type)!.push(agent);
    for (const origin of agent.signature_agents ?? []) byOrigin.set(origin, agent);
  }
  const matchUserAgent = compileUserAgentMatcher(doc.agents, { unlisted });
  return {
    version: doc.version,
    agents: doc.agents,
    getAgent: (id) => byId.get(id) ?? (unlisted ? unlistedAgentById(id) : undefined),
    agentsOfType: (type) => byType.get(type) ?? [],
    matchUserAgent,
    matchSignatureAgent(url) {
      const origin = canonicalOrigin(url);
      return origin === undefined ? undefined : byOrigin.get(origin);
    },
    matchRequestProbe: unlisted ? attackProbeInRequest : () => undefined,
  };
}

/**
 * Resolves a type name given as input: one of the 17 types, or a legacy alias
 * ("Headless Agent", "Headless Browser" mean "Automated Agent"). Undefined when unknown.
 */
export function resolveAgentType(name: string): AgentType | undefined {
  if ((AGENT_TYPES as readonly string[]).includes(name)) return name as AgentType;
  // Own keys only: "constructor" or "toString" would otherwise resolve to Object.prototype's members.
  return Object.hasOwn(AGENT_TYPE_ALIASES, name) ? AGENT_TYPE_ALIASES[name] : undefined;
}
