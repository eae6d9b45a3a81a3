// A project's saved robots rules as the renderer writes them (robots/agent-rules.ts), compiled
// once per distinct setting and shared by everything that judges visits against them: the
// violations report and the robots.txt alerts.
import type { Catalog } from '../catalog/catalog.js';
import { compileRobotsAgentRules, type AgentRobotsRule, type RobotsAgentRules } from '../robots/agent-rules.js';
import { compileRobotsRules, type RobotsMatcher } from '../robots/match.js';
import { validateRobotsOptions } from '../robots/options.js';
import type { ProjectRobotsSettings } from './project-settings.js';

export interface SavedRobotsRules {
  /** The per-agent rules of saved settings; null when they no longer hold for the catalog. */
  rulesFor(robots: ProjectRobotsSettings): RobotsAgentRules | null;
  /** The matcher of one agent's rule (RFC 9309 longest match). */
  matcherFor(rule: AgentRobotsRule): RobotsMatcher;
}

/**
 * Compiled saved rules over one catalog. Both caches are bounded: settings change rarely.
 * @example
 * const saved = createSavedRobotsRules(catalog);
 * const rule = saved.rulesFor(settings.robots)?.ruleFor('gptbot');
 * if (rule !== undefined) saved.matcherFor(rule)('/private/').allowed; // false
 */
export function createSavedRobotsRules(catalog: Catalog): SavedRobotsRules {
  const rulesCache = new Map<string, RobotsAgentRules | null>();
  const matchers = new WeakMap<AgentRobotsRule, RobotsMatcher>();
  return {
    rulesFor(robots) {
      const key = JSON.stringify(robots);
      let rules = rulesCache.get(key);
      if (rules === undefined) {
        try {
          rules = compileRobotsAgentRules(validateRobotsOptions(robots, catalog), catalog);
        } catch {
          // Saved rules were valid when saved; an agent since dropped from the catalog voids them
          // rather than failing a page (the settings page shows the error when they are edited).
          rules = null;
        }
        if (rulesCache.size >= 1000) rulesCache.clear();
        rulesCache.set(key, rules);
      }
      return rules;
    },
    matcherFor(rule) {
      let matcher = matchers.get(rule);
      if (matcher === undefined) {
        matcher = compileRobotsRules([...rule.disallow.map((pattern) => ({ allow: false, pattern })), ...rule.allow.map((pattern) => ({ allow: true, pattern }))]);
        matchers.set(rule, matcher);
      }
      return matcher;
    },
  };
}
