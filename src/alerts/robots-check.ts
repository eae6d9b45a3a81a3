// The robots.txt check of alerts: which Disallow pattern of a project's saved rules a visit breaks,
// matched exactly as the violations report matches them.
import type { ProjectRobotsSettings, ProjectSettingsStore } from '../api/project-settings.js';
import { compileRobotsRules, type RobotsMatcher } from '../robots/match.js';
import type { StoredVisit } from '../visits/visit-store.js';

// Saved settings are read again after this long: a change applies to alerts within it, and a busy
// project does not cost a settings read (a ClickHouse query) per batch of visits.
const SETTINGS_TTL_MS = 5000;

/**
 * The robots check the alert monitor takes, over a settings store: for each batch, the project's
 * saved rules (read at most every 5 s); a visit breaks them when its agent's type is chosen and
 * the path is disallowed (robots.txt itself never is, RFC 9309 §2.2.2).
 * @example
 * const robotsCheck = createRobotsCheck(settingsStore);
 * (await robotsCheck('prj_1'))(visit); // "/private/" or undefined
 */
export function createRobotsCheck(settings: ProjectSettingsStore, options: { readonly clock?: { now(): number } } = {}): (projectId: string) => Promise<(visit: StoredVisit) => string | undefined> {
  const clock = options.clock ?? { now: () => Date.now() };
  const saved = new Map<string, { robots: ProjectRobotsSettings | null; until: number }>();
  const matchers = new Map<string, RobotsMatcher>();
  const matcherFor = (robots: ProjectRobotsSettings): RobotsMatcher => {
    const key = JSON.stringify([robots.disallow ?? ['/'], robots.allow ?? []]);
    let matcher = matchers.get(key);
    if (matcher === undefined) {
      matcher = compileRobotsRules([...(robots.disallow ?? ['/']).map((pattern) => ({ allow: false, pattern })), ...(robots.allow ?? []).map((pattern) => ({ allow: true, pattern }))]);
      if (matchers.size >= 1000) matchers.clear();
      matchers.set(key, matcher);
    }
    return matcher;
  };
  return async (projectId) => {
    const now = clock.now();
    let entry = saved.get(projectId);
    if (entry === undefined || entry.until <= now) {
      entry = { robots: (await settings.getProjectSettings(projectId))?.robots ?? null, until: now + SETTINGS_TTL_MS };
      if (saved.size >= 10_000) saved.clear();
      saved.set(projectId, entry);
    }
    const robots = entry.robots;
    if (robots === null) return () => undefined;
    const types = new Set<string>(robots.agent_types);
    const match = matcherFor(robots);
    return (visit) => {
      if (visit.agent_type === null || !types.has(visit.agent_type)) return undefined;
      const decision = match(visit.request_path);
      return decision.allowed ? undefined : decision.rule?.pattern;
    };
  };
}
