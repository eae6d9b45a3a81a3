// Which Allow/Disallow lines each agent gets from validated robots options: its type's choice, then
// the agents named in disallow_agents and allow_agents on top. The renderer writes these rules and
// the violations report matches visits against them, so both always mean the same thing.
import type { Catalog } from '../catalog/catalog.js';
import type { Agent, AgentType } from '../catalog/types.js';
import { isUnlistedAgentId } from '../catalog/unlisted-agent.js';
import type { ValidatedAgentRule, ValidatedRobotsOptions } from './options.js';

/** Where an agent's rule comes from: its type, or its name in one of the two agent lists. */
export type AgentRobotsRuleSource = 'agent_types' | 'disallow_agents' | 'allow_agents';

/** The lines of one agent's group: percent-encoded path patterns, unique. */
export interface AgentRobotsRule {
  readonly source: AgentRobotsRuleSource;
  readonly disallow: readonly string[];
  readonly allow: readonly string[];
}

/** Every agent's rule under one set of options. */
export interface RobotsAgentRules {
  /** The agent's rule; undefined when the options say nothing about it (no group is written). */
  ruleFor(agentId: string): AgentRobotsRule | undefined;
  /** The types with at least one agent that has a rule, in no particular order. */
  readonly types: ReadonlySet<AgentType>;
  /** The types chosen in `agent_types` (every agent of them has a rule, unless named otherwise). */
  readonly chosenTypes: ReadonlySet<AgentType>;
  /** The agents named in `disallow_agents` or `allow_agents` (catalog ids). */
  readonly namedAgents: ReadonlySet<string>;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/**
 * Resolves the per-agent rules of validated options against the catalog they were validated with:
 * - an agent of a chosen type gets the top-level `disallow`/`allow`;
 * - a `disallow_agents` rule without paths gets them too; with paths, its own (`disallow` "/" when
 *   only `allow` is given), replacing its type's;
 * - an `allow_agents` rule without paths gets `Allow: /` alone (allowed everywhere, even past a
 *   longer Disallow of its type); with paths, its type's lines plus those paths as Allow lines
 *   (longest match still decides, RFC 9309 §2.2.2), or those Allow lines alone when its type is
 *   not chosen.
 * Agents unknown to the catalog are left out (options validated against it have none).
 * @example
 * const rules = compileRobotsAgentRules(validateRobotsOptions({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot'] }, catalog), catalog);
 * rules.ruleFor('gptbot'); // { source: 'agent_types', disallow: ['/'], allow: [] }
 * rules.ruleFor('ccbot'); // { source: 'allow_agents', disallow: [], allow: ['/'] }
 */
export function compileRobotsAgentRules(options: ValidatedRobotsOptions, catalog: Catalog): RobotsAgentRules {
  const chosen = new Set(options.agentTypes);
  const typeRule: AgentRobotsRule = { source: 'agent_types', disallow: options.disallow, allow: options.allow };
  const named = new Map<string, AgentRobotsRule>();
  const types = new Set<AgentType>(chosen);
  // An agent with no robots token is written nowhere, so no rule of robots.txt applies to it.
  const addressed = (agent: Agent | undefined): agent is Agent => agent !== undefined && agent.robots_tokens.length > 0;
  const name = (rule: ValidatedAgentRule, resolved: AgentRobotsRule) => {
    const agent = catalog.getAgent(rule.agent);
    if (!addressed(agent)) return;
    named.set(agent.id, resolved);
    types.add(agent.type);
  };
  for (const rule of options.disallowAgents) {
    const own = rule.disallow !== null || rule.allow !== null;
    name(rule, own ? { source: 'disallow_agents', disallow: rule.disallow ?? ['/'], allow: rule.allow ?? [] } : { ...typeRule, source: 'disallow_agents' });
  }
  for (const rule of options.allowAgents) {
    const agent = catalog.getAgent(rule.agent);
    const ofChosenType = agent !== undefined && chosen.has(agent.type);
    if (rule.allow === null) name(rule, { source: 'allow_agents', disallow: [], allow: ['/'] });
    else if (ofChosenType) name(rule, { source: 'allow_agents', disallow: options.disallow, allow: union(rule.allow, options.allow) });
    else name(rule, { source: 'allow_agents', disallow: [], allow: rule.allow });
  }
  return {
    types,
    chosenTypes: chosen,
    namedAgents: new Set(named.keys()),
    ruleFor(agentId) {
      const rule = named.get(agentId);
      if (rule !== undefined) return rule;
      // robots.txt names a chosen type's catalog agents only: an unlisted one, or one without a
      // robots token, was never addressed.
      const agent = catalog.getAgent(agentId);
      return addressed(agent) && !isUnlistedAgentId(agentId) && chosen.has(agent.type) ? typeRule : undefined;
    },
  };
}
