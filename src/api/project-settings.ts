// Per-project settings (robots rules the violations report checks, the client-IP rule visits are
// enriched with): the type, its validation at JSON pointers, the store contract and a memory store.
import { validateRobotsOptions } from '../robots/options.js';
import { RobotsOptionsError } from '../robots/errors.js';
import type { AgentType } from '../catalog/types.js';
import { createClientIpRule, type ClientIpRule } from '../verify/client-ip.js';
import { pointerTo, type FieldError } from './problem.js';

/** The robots rules a project publishes (the `POST /robots-txts` options it saved), canonical. */
export interface ProjectRobotsSettings {
  readonly agent_types: readonly AgentType[];
  /** Percent-encoded path patterns (default ["/"]). */
  readonly disallow?: readonly string[];
  readonly allow?: readonly string[];
}

/** How the visitor's address is read from a visit's headers (see `createClientIpRule`); empty means the server default. */
export interface ProjectClientIpSettings {
  readonly headers?: readonly string[];
  readonly trusted_proxies?: number | readonly string[];
}

/** One project's settings. */
export interface ProjectSettings {
  /** null: the project saved no robots rules, so nothing counts as a violation. */
  readonly robots: ProjectRobotsSettings | null;
  readonly client_ip: ProjectClientIpSettings;
}

/** Settings of a project that never saved any. */
export const DEFAULT_PROJECT_SETTINGS: ProjectSettings = Object.freeze({ robots: null, client_ip: Object.freeze({}) });

/** Reads and writes project settings; the SQLite store implements it in the node adapter. */
export interface ProjectSettingsStore {
  /** The saved settings; undefined when the project saved none. */
  getProjectSettings(projectId: string): Promise<ProjectSettings | undefined> | ProjectSettings | undefined;
  putProjectSettings(projectId: string, settings: ProjectSettings): Promise<void> | void;
}

/** An in-memory settings store (lost at exit), for tests and embedding. */
export interface MemoryProjectSettingsStore extends ProjectSettingsStore {
  getProjectSettings(projectId: string): ProjectSettings | undefined;
  putProjectSettings(projectId: string, settings: ProjectSettings): void;
}

/**
 * Creates an in-memory settings store.
 * @example
 * const settings = createMemoryProjectSettingsStore();
 * settings.putProjectSettings('prj_1', { robots: null, client_ip: { trusted_proxies: 1 } });
 */
export function createMemoryProjectSettingsStore(): MemoryProjectSettingsStore {
  const byProject = new Map<string, ProjectSettings>();
  return {
    getProjectSettings: (projectId) => byProject.get(projectId),
    putProjectSettings(projectId, settings) {
      byProject.set(projectId, settings);
    },
  };
}

/** The outcome of `parseProjectSettings`: the settings to save, or every error at its pointer. */
export type ParsedProjectSettings = { readonly ok: true; readonly settings: ProjectSettings } | { readonly ok: false; readonly errors: FieldError[] };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

function parseRobots(value: unknown, errors: FieldError[]): ProjectRobotsSettings | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) {
    errors.push({ pointer: '/robots', code: 'type', message: `robots must be an object with agent_types, or null; got ${describe(value)}` });
    return undefined;
  }
  for (const key of ['comments', 'markers']) {
    if (value[key] !== undefined) errors.push({ pointer: pointerTo('/robots', key), code: 'unknown-field', message: `${key} is a rendering option, not a saved rule` });
  }
  try {
    // The same validation as POST /robots-txts, so saved rules always render.
    const valid = validateRobotsOptions({ agent_types: value['agent_types'], disallow: value['disallow'], allow: value['allow'] });
    // Canonical, and valid input again for POST /robots-txts (which refuses an empty allow list).
    return { agent_types: valid.agentTypes, disallow: valid.disallow, ...(valid.allow.length === 0 ? {} : { allow: valid.allow }) };
  } catch (error) {
    if (!(error instanceof RobotsOptionsError)) throw error;
    for (const issue of error.issues) errors.push({ pointer: `/robots${issue.path}`, code: issue.code, message: issue.message });
    return undefined;
  }
}

function parseClientIp(value: unknown, errors: FieldError[]): ProjectClientIpSettings | undefined {
  if (!isObject(value)) {
    errors.push({ pointer: '/client_ip', code: 'type', message: `client_ip must be an object with headers and/or trusted_proxies; got ${describe(value)}` });
    return undefined;
  }
  const before = errors.length;
  const settings: { headers?: readonly string[]; trusted_proxies?: number | readonly string[] } = {};
  const headers = value['headers'];
  if (headers !== undefined && headers !== null) {
    if (!Array.isArray(headers) || headers.length === 0) {
      errors.push({ pointer: '/client_ip/headers', code: 'type', message: 'headers must be a non-empty array of header names' });
    } else {
      headers.forEach((name: unknown, i) => {
        try {
          if (typeof name !== 'string') throw new TypeError(`must be a string, got ${describe(name)}`);
          createClientIpRule({ headers: [name] });
        } catch (error) {
          errors.push({ pointer: `/client_ip/headers/${i}`, code: 'invalid-header-name', message: `not a header name: ${(error as Error).message}` });
        }
      });
      settings.headers = headers.map((name) => String(name).toLowerCase());
    }
  }
  const proxies = value['trusted_proxies'];
  if (proxies !== undefined && proxies !== null) {
    if (typeof proxies === 'number') {
      try {
        createClientIpRule({ trustedProxies: proxies });
        settings.trusted_proxies = proxies;
      } catch (error) {
        errors.push({ pointer: '/client_ip/trusted_proxies', code: 'invalid-count', message: (error as Error).message });
      }
    } else if (Array.isArray(proxies)) {
      proxies.forEach((cidr: unknown, i) => {
        try {
          if (typeof cidr !== 'string') throw new TypeError(`must be a CIDR string, got ${describe(cidr)}`);
          createClientIpRule({ trustedProxies: [cidr] });
        } catch (error) {
          errors.push({ pointer: `/client_ip/trusted_proxies/${i}`, code: 'invalid-cidr', message: (error as Error).message });
        }
      });
      settings.trusted_proxies = proxies as string[];
    } else {
      errors.push({ pointer: '/client_ip/trusted_proxies', code: 'type', message: `trusted_proxies must be a hop count or an array of CIDRs; got ${describe(proxies)}` });
    }
  }
  return errors.length === before ? settings : undefined;
}

/**
 * Validates a settings update (the `PUT /project-settings` body) over the current settings: an
 * absent member keeps its saved value, `robots: null` clears the rules. Never throws on any input.
 * @example
 * parseProjectSettings({ robots: { agent_types: ['AI Data Scraper'] } }, DEFAULT_PROJECT_SETTINGS);
 * // { ok: true, settings: { robots: { agent_types: ['AI Data Scraper'], disallow: ['/'], allow: [] }, client_ip: {} } }
 */
export function parseProjectSettings(input: unknown, current: ProjectSettings): ParsedProjectSettings {
  if (!isObject(input)) return { ok: false, errors: [{ pointer: '', code: 'type', message: `settings must be an object with robots and/or client_ip; got ${describe(input)}` }] };
  const errors: FieldError[] = [];
  const robots = input['robots'] === undefined ? current.robots : parseRobots(input['robots'], errors);
  const clientIp = input['client_ip'] === undefined ? current.client_ip : parseClientIp(input['client_ip'], errors);
  if (errors.length > 0 || robots === undefined || clientIp === undefined) return { ok: false, errors };
  return { ok: true, settings: { robots, client_ip: clientIp } };
}

/** The client-IP rule a project's settings describe; undefined when they leave it to the server default. */
export function projectClientIpRule(settings: ProjectSettings): ClientIpRule | undefined {
  const { headers, trusted_proxies } = settings.client_ip;
  if (headers === undefined && trusted_proxies === undefined) return undefined;
  return createClientIpRule({ ...(headers === undefined ? {} : { headers }), ...(trusted_proxies === undefined ? {} : { trustedProxies: trusted_proxies }) });
}

/** Per-project client-IP rules, compiled once per project and dropped when its settings change. */
export interface ProjectClientIpRules {
  /** The project's rule, or `fallback` when it has none of its own; synchronous once compiled (the POST /visits hot path). */
  ruleFor(projectId: string): ClientIpRule | Promise<ClientIpRule>;
  /** Forgets the compiled rule (after its settings were saved). */
  invalidate(projectId: string): void;
}

/**
 * Creates the per-project rule cache the visit pipeline reads on every POST /visits.
 * @example
 * const rules = createProjectClientIpRules(settingsStore, createClientIpRule());
 * const rule = await rules.ruleFor('prj_1');
 */
export function createProjectClientIpRules(store: ProjectSettingsStore, fallback: ClientIpRule, maxProjects = 10_000): ProjectClientIpRules {
  const cache = new Map<string, ClientIpRule>();
  // Bumped by every invalidation, so a read that raced a save does not cache the old rule.
  let generation = 0;
  const load = async (projectId: string): Promise<ClientIpRule> => {
    const started = generation;
    const settings = await store.getProjectSettings(projectId);
    let rule = fallback;
    if (settings !== undefined) {
      try {
        rule = projectClientIpRule(settings) ?? fallback;
      } catch {
        // Saved settings were validated; a rule that no longer compiles falls back rather than failing visits.
        rule = fallback;
      }
    }
    if (started !== generation) return rule;
    if (cache.size >= maxProjects) cache.clear();
    cache.set(projectId, rule);
    return rule;
  };
  return {
    ruleFor: (projectId) => cache.get(projectId) ?? load(projectId),
    invalidate(projectId) {
      generation++;
      cache.delete(projectId);
    },
  };
}
