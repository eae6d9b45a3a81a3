// GET and PUT /project-settings: a project's saved robots rules, client-IP rule and site hosts,
// validated at JSON pointers; saving drops the project's compiled rules so the next visit uses the new ones.
import type { Catalog } from '../catalog/catalog.js';
import { jsonBodyProblem, parseJsonBody } from './json-body.js';
import { problem } from './problem.js';
import { DEFAULT_PROJECT_SETTINGS, parseProjectSettings, type ProjectRequestRulesCache, type ProjectSettingsStore } from './project-settings.js';
import type { RouteTable } from './route.js';
import type { ApiResponse } from './types.js';
import { JSON_NO_STORE_HEADERS } from './security-headers.js';

/** Options of `createProjectSettingsRoutes`. */
export interface ProjectSettingsRoutesOptions {
  readonly settings: ProjectSettingsStore;
  /** Resolves the agents robots rules name (the engine's catalog); without it they are checked for form only. */
  readonly catalog?: Catalog;
  /** The visit pipeline's per-project rules, invalidated on every save. */
  readonly requestRules?: ProjectRequestRulesCache;
  /** Nesting limit of JSON bodies (default 64). */
  readonly maxJsonDepth?: number;
}

function json(value: unknown): ApiResponse {
  return { status: 200, headers: JSON_NO_STORE_HEADERS, body: JSON.stringify(value) };
}

/**
 * Creates the settings routes (auth: a project token, or an admin session naming `?project=` and
 * sending its CSRF token on PUT).
 * @throws {TypeError} when `settings` is not a ProjectSettingsStore.
 * @example
 * createApiHandler({ engine, projects, visits, routes: [createProjectSettingsRoutes({ settings })] });
 */
export function createProjectSettingsRoutes(options: ProjectSettingsRoutesOptions): RouteTable {
  if (typeof options?.settings?.getProjectSettings !== 'function' || typeof options.settings.putProjectSettings !== 'function') {
    throw new TypeError('settings must be a ProjectSettingsStore with getProjectSettings and putProjectSettings');
  }
  const { settings, requestRules, catalog } = options;
  const maxJsonDepth = options.maxJsonDepth ?? 64;
  return {
    '/project-settings': {
      GET: {
        auth: 'token-or-admin',
        json: false,
        async run({ project }) {
          const saved = (await settings.getProjectSettings(project!.id)) ?? DEFAULT_PROJECT_SETTINGS;
          // Settings saved before site_hosts existed answer with its default, as the schema requires.
          return json(saved.site_hosts === undefined ? { ...saved, site_hosts: [] } : saved);
        },
      },
      PUT: {
        auth: 'token-or-admin',
        json: true,
        async run({ request, project }) {
          const parsed = parseJsonBody(request.body, maxJsonDepth);
          if (!parsed.ok) return jsonBodyProblem(parsed);
          const projectId = project!.id;
          const current = (await settings.getProjectSettings(projectId)) ?? DEFAULT_PROJECT_SETTINGS;
          const next = parseProjectSettings(parsed.value, current, catalog);
          if (!next.ok) return problem('validation-failed', 'The settings are invalid; see errors.', { errors: next.errors });
          await settings.putProjectSettings(projectId, next.settings);
          requestRules?.invalidate(projectId);
          return json(next.settings);
        },
      },
    },
  };
}
