// Per-project settings (robots rules the violations report checks, the client-IP rule visits are
// enriched with, the site's hosts for Web Bot Auth): the type, its validation at JSON pointers,
// the store contract, a memory store and the visit pipeline's per-project cache.
import type { Catalog } from '../catalog/catalog.js';
import { validateRobotsOptions, type RobotsAgentEntry, type ValidatedAgentRule } from '../robots/options.js';
import { RobotsOptionsError } from '../robots/errors.js';
import type { AgentType } from '../catalog/types.js';
import { createClientIpRule, type ClientIpRule } from '../verify/client-ip.js';
import { siteAuthority } from '../verify/web-bot-auth/components.js';
import { isSecretHeader } from '../visits/visit.js';
import { pointerTo, type FieldError } from '../field-error.js';

/** Header names a client-IP rule may list: a real chain of proxies needs two or three. */
export const MAX_CLIENT_IP_HEADERS = 20;
/** CIDRs `trusted_proxies` may list (robots path lists stop at 100 too). */
export const MAX_TRUSTED_PROXIES = 100;
/** Hosts `site_hosts` may list. */
export const MAX_SITE_HOSTS = 100;
// The members of `client_ip` (OpenAPI ProjectClientIp, additionalProperties: false).
const CLIENT_IP_KEYS: ReadonlySet<string> = new Set(['headers', 'trusted_proxies']);
// The members of a settings update (OpenAPI ProjectSettingsUpdate, additionalProperties: false).
const SETTINGS_KEYS: ReadonlySet<string> = new Set(['robots', 'client_ip', 'site_hosts']);

/** The robots rules a project publishes (the `POST /robots-txts` options it saved), canonical. */
export interface ProjectRobotsSettings {
  readonly agent_types: readonly AgentType[];
  /** Percent-encoded path patterns (default ["/"]). */
  readonly disallow?: readonly string[];
  readonly allow?: readonly string[];
  /** Agents disallowed or allowed by name (catalog ids, with their own paths when they have any). */
  readonly disallow_agents?: readonly RobotsAgentEntry[];
  readonly allow_agents?: readonly RobotsAgentEntry[];
}

/** How the visitor's address is read from a visit's headers (see `createClientIpRule`); empty means the server default. */
export interface ProjectClientIpSettings {
  /** The headers to read, in order; `[]` trusts none (a site with no proxy in front, where a client writes them all). */
  readonly headers?: readonly string[];
  readonly trusted_proxies?: number | readonly string[];
}

/** One project's settings. */
export interface ProjectSettings {
  /** null: the project saved no robots rules, so nothing counts as a violation. */
  readonly robots: ProjectRobotsSettings | null;
  readonly client_ip: ProjectClientIpSettings;
  /**
   * The hosts the site answers on (`example.com`, `www.example.com`, `example.com:8443`),
   * lower-case, the default port dropped. A Web Bot Auth signature for any other host fails
   * `authority-not-ours` (a replay of a signature made for another site). Empty or absent (settings
   * saved before it existed): any host.
   */
  readonly site_hosts?: readonly string[];
}

/** Settings of a project that never saved any. */
export const DEFAULT_PROJECT_SETTINGS: ProjectSettings = Object.freeze({ robots: null, client_ip: Object.freeze({}), site_hosts: Object.freeze([]) as readonly string[] });

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

/** A validated agent rule as saved: its id alone, or with the paths it gives. */
function savedAgentRule(rule: ValidatedAgentRule): RobotsAgentEntry {
  if (rule.disallow === null && rule.allow === null) return rule.agent;
  return { agent: rule.agent, ...(rule.disallow === null ? {} : { disallow: rule.disallow }), ...(rule.allow === null ? {} : { allow: rule.allow }) };
}

function parseRobots(value: unknown, catalog: Catalog | undefined, errors: FieldError[]): ProjectRobotsSettings | null | undefined {
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
    const valid = validateRobotsOptions(
      { agent_types: value['agent_types'], disallow: value['disallow'], allow: value['allow'], disallow_agents: value['disallow_agents'], allow_agents: value['allow_agents'] },
      catalog,
    );
    // Canonical, and valid input again for POST /robots-txts (which refuses empty lists).
    return {
      agent_types: valid.agentTypes,
      disallow: valid.disallow,
      ...(valid.allow.length === 0 ? {} : { allow: valid.allow }),
      ...(valid.disallowAgents.length === 0 ? {} : { disallow_agents: valid.disallowAgents.map(savedAgentRule) }),
      ...(valid.allowAgents.length === 0 ? {} : { allow_agents: valid.allowAgents.map(savedAgentRule) }),
    };
  } catch (error) {
    if (!(error instanceof RobotsOptionsError)) throw error;
    for (const issue of error.issues) errors.push({ pointer: `/robots${issue.path}`, code: issue.code, message: issue.message });
    return undefined;
  }
}

/** The error of one client-IP header name, if any (pointer `/client_ip/headers/<i>`). */
function headerNameError(name: unknown, pointer: string): FieldError | undefined {
  if (typeof name !== 'string') return { pointer, code: 'type', message: `a header name must be a string, got ${describe(name)}` };
  try {
    // RFC 9110 §5.1: a field name is a token; createClientIpRule checks it as the rule will read it.
    createClientIpRule({ headers: [name] });
  } catch (error) {
    return { pointer, code: 'invalid-header-name', message: `not a header name: ${(error as Error).message}` };
  }
  // A credential never carries the visitor's address, and naming one would have the server read
  // it (visits drop these headers before storage, so such a rule could never match either).
  if (isSecretHeader(name.toLowerCase())) return { pointer, code: 'secret-header', message: `${JSON.stringify(name)} holds credentials, not the client address` };
  return undefined;
}

function parseClientIp(value: unknown, errors: FieldError[]): ProjectClientIpSettings | undefined {
  if (!isObject(value)) {
    errors.push({ pointer: '/client_ip', code: 'type', message: `client_ip must be an object with headers and/or trusted_proxies; got ${describe(value)}` });
    return undefined;
  }
  const before = errors.length;
  // A misspelt member must not save as "the server default" (OpenAPI: additionalProperties false).
  for (const key of Object.keys(value)) {
    if (!CLIENT_IP_KEYS.has(key)) errors.push({ pointer: pointerTo('/client_ip', key), code: 'unknown-field', message: `client_ip has no member ${JSON.stringify(key.slice(0, 64))}; it takes headers and trusted_proxies` });
  }
  const settings: { headers?: readonly string[]; trusted_proxies?: number | readonly string[] } = {};
  const headers = value['headers'];
  if (headers !== undefined && headers !== null) {
    if (!Array.isArray(headers)) {
      errors.push({ pointer: '/client_ip/headers', code: 'type', message: 'headers must be an array of header names ([] trusts none)' });
    } else if (headers.length > MAX_CLIENT_IP_HEADERS) {
      errors.push({ pointer: '/client_ip/headers', code: 'max-items', message: `headers may name at most ${MAX_CLIENT_IP_HEADERS} headers, got ${headers.length}` });
    } else {
      headers.forEach((name: unknown, i) => {
        const error = headerNameError(name, `/client_ip/headers/${i}`);
        if (error !== undefined) errors.push(error);
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
      if (proxies.length > MAX_TRUSTED_PROXIES) {
        errors.push({ pointer: '/client_ip/trusted_proxies', code: 'max-items', message: `trusted_proxies may list at most ${MAX_TRUSTED_PROXIES} CIDRs, got ${proxies.length}` });
      } else {
        proxies.forEach((cidr: unknown, i) => {
          if (typeof cidr !== 'string') {
            errors.push({ pointer: `/client_ip/trusted_proxies/${i}`, code: 'type', message: `must be a CIDR string, got ${describe(cidr)}` });
            return;
          }
          try {
            createClientIpRule({ trustedProxies: [cidr] });
          } catch (error) {
            errors.push({ pointer: `/client_ip/trusted_proxies/${i}`, code: 'invalid-cidr', message: (error as Error).message });
          }
        });
        settings.trusted_proxies = proxies as string[];
      }
    } else {
      errors.push({ pointer: '/client_ip/trusted_proxies', code: 'type', message: `trusted_proxies must be a hop count or an array of CIDRs; got ${describe(proxies)}` });
    }
  }
  return errors.length === before ? settings : undefined;
}

function parseSiteHosts(value: unknown, errors: FieldError[]): readonly string[] | undefined {
  if (value === null) return [];
  if (!Array.isArray(value)) {
    errors.push({ pointer: '/site_hosts', code: 'type', message: `site_hosts must be an array of host names (empty: any host); got ${describe(value)}` });
    return undefined;
  }
  if (value.length > MAX_SITE_HOSTS) {
    errors.push({ pointer: '/site_hosts', code: 'max-items', message: `site_hosts may list at most ${MAX_SITE_HOSTS} hosts, got ${value.length}` });
    return undefined;
  }
  const before = errors.length;
  const hosts = new Set<string>();
  value.forEach((host: unknown, i) => {
    if (typeof host !== 'string') {
      errors.push({ pointer: `/site_hosts/${i}`, code: 'type', message: `must be a host name string, got ${describe(host)}` });
      return;
    }
    const normalized = savedSiteHost(host);
    if (typeof normalized === 'string') hosts.add(normalized);
    else errors.push({ pointer: `/site_hosts/${i}`, code: 'invalid-host', message: `${normalized.problem}, got ${JSON.stringify(host.slice(0, 64))}` });
  });
  return errors.length === before ? [...hosts] : undefined;
}

// A DNS name (RFC 1035 §2.3.4: labels of at most 63 bytes, 253 in all) or a bracketed IPv6
// address, as siteAuthority leaves them (lower-case, IDNs in punycode), with an optional port.
const SAVED_HOST = /^(?:([a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*)|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** A site host as saved (see `siteAuthority`), or what is wrong with it. */
function savedSiteHost(raw: string): string | { readonly problem: string } {
  // Refused, not trimmed: a pasted host with a stray newline or NUL is not the host it shows.
  if (/[\u0000-\u0020\u007f-\u009f]/.test(raw)) return { problem: 'a host holds no spaces or control characters' };
  if (raw.includes('*')) return { problem: 'wildcards are not supported: list each host the site answers on' };
  const normalized = raw.length <= 261 ? siteAuthority(raw, 'https') : undefined;
  const parts = normalized === undefined ? null : SAVED_HOST.exec(normalized);
  if (normalized === undefined || parts === null || (parts[1] !== undefined && parts[1].length > 253)) {
    return { problem: 'must be a host or host:port such as "example.com" or "example.com:8443"' };
  }
  const port = parts[2] === undefined ? undefined : Number(parts[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return { problem: 'a port is 1 to 65535' };
  return normalized;
}

/**
 * Validates a settings update (the `PUT /project-settings` body) over the current settings: an
 * absent member keeps its saved value, `robots: null` clears the rules, `site_hosts: []` (or null)
 * accepts any host again. With a catalog, agents the robots rules name are resolved to its ids
 * (unknown ones rejected). Unknown members, at the top level or in `client_ip`, are refused at
 * their pointer (OpenAPI ProjectSettingsUpdate and ProjectClientIp: additionalProperties false).
 * Never throws on any input.
 * @example
 * parseProjectSettings({ robots: { agent_types: ['AI Data Scraper'] } }, DEFAULT_PROJECT_SETTINGS);
 * // { ok: true, settings: { robots: { agent_types: ['AI Data Scraper'], disallow: ['/'] }, client_ip: {}, site_hosts: [] } }
 */
export function parseProjectSettings(input: unknown, current: ProjectSettings, catalog?: Catalog): ParsedProjectSettings {
  if (!isObject(input)) return { ok: false, errors: [{ pointer: '', code: 'type', message: `settings must be an object with robots, client_ip and/or site_hosts; got ${describe(input)}` }] };
  const errors: FieldError[] = [];
  // A misspelt member ("site_hostz") must not answer 200 and change nothing.
  for (const key of Object.keys(input)) {
    if (!SETTINGS_KEYS.has(key)) errors.push({ pointer: pointerTo('', key), code: 'unknown-field', message: `settings have no member ${JSON.stringify(key.slice(0, 64))}; they take robots, client_ip and site_hosts` });
  }
  const robots = input['robots'] === undefined ? current.robots : parseRobots(input['robots'], catalog, errors);
  const clientIp = input['client_ip'] === undefined ? current.client_ip : parseClientIp(input['client_ip'], errors);
  const siteHosts = input['site_hosts'] === undefined ? (current.site_hosts ?? []) : parseSiteHosts(input['site_hosts'], errors);
  if (errors.length > 0 || robots === undefined || clientIp === undefined || siteHosts === undefined) return { ok: false, errors };
  return { ok: true, settings: { robots, client_ip: clientIp, site_hosts: siteHosts } };
}

/** The client-IP rule a project's settings describe; undefined when they leave it to the server default. */
export function projectClientIpRule(settings: ProjectSettings): ClientIpRule | undefined {
  const { headers, trusted_proxies } = settings.client_ip;
  if (headers === undefined && trusted_proxies === undefined) return undefined;
  return createClientIpRule({ ...(headers === undefined ? {} : { headers }), ...(trusted_proxies === undefined ? {} : { trustedProxies: trusted_proxies }) });
}

/** What the visit pipeline takes from a project's settings. */
export interface ProjectRequestRules {
  /** How the visitor's address is read (the project's proxies, or the server default). */
  readonly clientIp: ClientIpRule;
  /** The site's hosts for Web Bot Auth (`VerificationRequest.siteAuthorities`); undefined: any host, or the verifier's own list. */
  readonly siteAuthorities?: readonly string[];
}

/** Per-project request rules, compiled once per project, refreshed every few seconds and dropped when its settings change. */
export interface ProjectRequestRulesCache {
  /** The project's rules (the fallback client-IP rule when it has none of its own); synchronous while fresh (the POST /visits hot path). */
  rulesFor(projectId: string): ProjectRequestRules | Promise<ProjectRequestRules>;
  /** Forgets the compiled rules (after its settings were saved). */
  invalidate(projectId: string): void;
}

/** Options of `createProjectRequestRules`. */
export interface ProjectRequestRulesOptions {
  /** Projects whose rules are kept at once (default 10,000; past it the cache starts over). */
  readonly maxProjects?: number;
  /**
   * How long compiled rules are used before the settings are read again (default 5,000 ms), so
   * rules saved through another server sharing the settings store apply within that time.
   */
  readonly ttlMs?: number;
  /** Milliseconds since the epoch (default `Date.now`). */
  readonly clock?: { now(): number };
}

/**
 * Creates the per-project rules cache the visit pipeline reads on every POST /visits. Rules are
 * read again once `ttlMs` old; when that read fails (the store is down), the old rules keep
 * serving and the read is retried after another `ttlMs`.
 * @throws {RangeError} when `maxProjects` or `ttlMs` is not a positive integer.
 * @example
 * const rules = createProjectRequestRules(settingsStore, createClientIpRule(), { ttlMs: 5000 });
 * const { clientIp, siteAuthorities } = await rules.rulesFor('prj_1');
 */
export function createProjectRequestRules(store: ProjectSettingsStore, fallback: ClientIpRule, options: ProjectRequestRulesOptions = {}): ProjectRequestRulesCache {
  const maxProjects = options.maxProjects ?? 10_000;
  const ttlMs = options.ttlMs ?? 5000;
  if (!Number.isSafeInteger(maxProjects) || maxProjects < 1) throw new RangeError(`maxProjects must be a positive integer, got ${String(maxProjects)}`);
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError(`ttlMs must be a positive integer, got ${String(ttlMs)}`);
  const clock = options.clock ?? { now: () => Date.now() };
  const defaults: ProjectRequestRules = Object.freeze({ clientIp: fallback });
  const cache = new Map<string, { readonly rules: ProjectRequestRules; readonly until: number }>();
  // One read per project at a time: the visits arriving while it runs share it.
  const loading = new Map<string, Promise<ProjectRequestRules>>();
  // Bumped by every invalidation, so a read that raced a save does not cache the old rules.
  let generation = 0;
  const compile = (settings: ProjectSettings | undefined): ProjectRequestRules => {
    if (settings === undefined) return defaults;
    let clientIp: ClientIpRule;
    try {
      clientIp = projectClientIpRule(settings) ?? fallback;
    } catch {
      // Saved settings were validated; a rule that no longer compiles falls back rather than failing visits.
      clientIp = fallback;
    }
    const hosts = settings.site_hosts;
    return hosts === undefined || hosts.length === 0 ? (clientIp === fallback ? defaults : { clientIp }) : { clientIp, siteAuthorities: hosts };
  };
  const remember = (projectId: string, rules: ProjectRequestRules) => {
    if (cache.size >= maxProjects && !cache.has(projectId)) cache.clear();
    cache.set(projectId, { rules, until: clock.now() + ttlMs });
  };
  const load = async (projectId: string, stale: ProjectRequestRules | undefined): Promise<ProjectRequestRules> => {
    const started = generation;
    let rules: ProjectRequestRules;
    try {
      rules = compile(await store.getProjectSettings(projectId));
    } catch (error) {
      if (stale === undefined) throw error;
      // The store is down: the rules it last gave still describe the project's proxies and hosts.
      if (started === generation) remember(projectId, stale);
      return stale;
    }
    if (started === generation) remember(projectId, rules);
    return rules;
  };
  return {
    rulesFor(projectId) {
      const cached = cache.get(projectId);
      if (cached !== undefined && cached.until > clock.now()) return cached.rules;
      const running = loading.get(projectId);
      if (running !== undefined) return running;
      const pending: Promise<ProjectRequestRules> = load(projectId, cached?.rules).finally(() => {
        if (loading.get(projectId) === pending) loading.delete(projectId);
      });
      loading.set(projectId, pending);
      return pending;
    },
    invalidate(projectId) {
      generation++;
      cache.delete(projectId);
      loading.delete(projectId);
    },
  };
}
