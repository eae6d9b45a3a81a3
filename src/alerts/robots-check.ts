// The robots.txt check of alerts: which Disallow pattern of a project's saved rules a visit breaks,
// matched exactly as the violations report matches them.
import type { ProjectRobotsSettings, ProjectSettingsStore } from '../api/project-settings.js';
import { createSavedRobotsRules } from '../api/saved-robots-rules.js';
import type { Catalog } from '../catalog/catalog.js';
import type { StoredVisit } from '../visits/visit-store.js';

// Saved settings are read again after this long: a change applies to alerts within it, and a busy
// project does not cost a settings read (a ClickHouse query) per batch of visits.
const SETTINGS_TTL_MS = 5000;

/**
 * The robots check the alert monitor takes, over a settings store: for each batch, the project's
 * saved rules (read at most every 5 s), per agent as the renderer writes them and the violations
 * report reads them; a visit breaks them when its agent's rule disallows the path (robots.txt
 * itself never is, RFC 9309 §2.2.2).
 * @example
 * const robotsCheck = createRobotsCheck(settingsStore, { catalog: engine.catalog });
 * (await robotsCheck('prj_1'))(visit); // "/private/" or undefined
 */
export function createRobotsCheck(
  settings: ProjectSettingsStore,
  options: { readonly catalog: Catalog; readonly clock?: { now(): number } },
): (projectId: string) => Promise<(visit: StoredVisit) => string | undefined> {
  const clock = options.clock ?? { now: () => Date.now() };
  const saved = new Map<string, { robots: ProjectRobotsSettings | null; until: number }>();
  const savedRules = createSavedRobotsRules(options.catalog);
  return async (projectId) => {
    const now = clock.now();
    let entry = saved.get(projectId);
    if (entry === undefined || entry.until <= now) {
      entry = { robots: (await settings.getProjectSettings(projectId))?.robots ?? null, until: now + SETTINGS_TTL_MS };
      if (saved.size >= 10_000) saved.clear();
      saved.set(projectId, entry);
    }
    const rules = entry.robots === null ? null : savedRules.rulesFor(entry.robots);
    if (rules === null) return () => undefined;
    return (visit) => {
      const rule = visit.agent_id === null ? undefined : rules.ruleFor(visit.agent_id);
      if (rule === undefined) return undefined;
      const decision = savedRules.matcherFor(rule)(visit.request_path);
      return decision.allowed ? undefined : decision.rule?.pattern;
    };
  };
}
