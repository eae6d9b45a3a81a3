// Validates robots.txt options into a canonical form (unique types in display order, encoded paths,
// per-agent rules resolved to catalog ids) whose key identifies the output, so equal requests share
// one memoized rendering.
import { resolveAgentType, type Catalog } from '../catalog/catalog.js';
import { AGENT_TYPES, AGENT_TYPE_ALIASES, type AgentType } from '../catalog/types.js';
import { hasLoneSurrogate } from '../json-string.js';
import { CONTROL, encodeRobotsPath } from './encode-path.js';
import { preview, RobotsOptionsError, type RobotsIssue } from './errors.js';

/** Marker comment text around the generated block, for splicing it into an existing robots.txt. */
export interface RobotsMarkers {
  readonly begin: string;
  readonly end: string;
}

/**
 * One agent named in `disallow_agents` or `allow_agents`, with paths of its own. Without paths a
 * disallow rule takes the top-level `disallow`/`allow`, an allow rule allows everything.
 */
export interface RobotsAgentRule {
  /** A catalog agent id (`gptbot`) or one of its robots tokens (`GPTBot`, case-insensitive). */
  readonly agent: string;
  /** Disallow rules only: the paths this agent is disallowed (default "/" when `allow` is given). */
  readonly disallow?: string | readonly string[] | null;
  /** The paths this agent stays allowed (in an allow rule: exceptions to its type's disallow). */
  readonly allow?: string | readonly string[] | null;
}

/** An entry of `disallow_agents` / `allow_agents`: an agent id or robots token, or a rule with paths. */
export type RobotsAgentEntry = string | RobotsAgentRule;

/**
 * Options of `robotsTxt` (the `POST /robots-txts` body plus extensions). Unknown keys are ignored;
 * `null` counts as absent for the optional ones.
 */
export interface RobotsTxtOptions {
  /**
   * Agent types to disallow (the 17 types; "Headless Agent"/"Headless Browser" mean "Automated
   * Agent"). Required; may be empty only when `disallow_agents` or `allow_agents` names an agent.
   */
  readonly agent_types: readonly string[];
  /** Agents disallowed by name, on top of the types (their own paths replace the top-level ones). */
  readonly disallow_agents?: readonly RobotsAgentEntry[] | null;
  /**
   * Agents allowed by name: taken out of a chosen type (all AI Data Scrapers but one), or given
   * allowed paths. Each gets its own group (`Allow: /`, or its paths), so a `*` group elsewhere in
   * the file no longer applies to it (RFC 9309 §2.2.1).
   */
  readonly allow_agents?: readonly RobotsAgentEntry[] | null;
  /** Path pattern(s) each chosen agent is disallowed; default "/". */
  readonly disallow?: string | readonly string[] | null;
  /** Path pattern(s) each chosen agent stays allowed (longest match wins, allow wins ties). */
  readonly allow?: string | readonly string[] | null;
  /** Adds `# <type>` and `# <agent url>` above each group. */
  readonly comments?: boolean | null;
  /** `true`: `# BEGIN agentwarden` … `# END agentwarden`; a string: `# BEGIN <it>` … `# END <it>`; or both lines' text. */
  readonly markers?: boolean | string | RobotsMarkers | null;
}

/** A per-agent rule after validation; `null` paths mean "not given". */
export interface ValidatedAgentRule {
  /** The catalog agent id (the reference as given when validated without a catalog). */
  readonly agent: string;
  readonly disallow: readonly string[] | null;
  readonly allow: readonly string[] | null;
}

/** Options after validation: what the renderer needs, canonical, plus the cache key derived from it. */
export interface ValidatedRobotsOptions {
  /** Unique, in display order (AGENT_TYPES). */
  readonly agentTypes: readonly AgentType[];
  /** Unique agents, sorted by id. */
  readonly disallowAgents: readonly ValidatedAgentRule[];
  readonly allowAgents: readonly ValidatedAgentRule[];
  /** Percent-encoded, unique, in input order. */
  readonly disallow: readonly string[];
  readonly allow: readonly string[];
  readonly comments: boolean;
  readonly markers: RobotsMarkers | null;
  /** Canonical form of everything above: equal keys render equal text. */
  readonly key: string;
}

/** Result of `parseRobotsOptions`: the validated options or every issue found. */
export type ParsedRobotsOptions =
  | { readonly ok: true; readonly options: ValidatedRobotsOptions }
  | { readonly ok: false; readonly issues: readonly RobotsIssue[] };

/** At most this many entries in `agent_types`, `disallow`, `allow` or an agent list (duplicates included). */
export const MAX_LIST_ITEMS = 100;
/** Longest marker text accepted. */
export const MAX_MARKER_LENGTH = 200;
/** The marker text `markers: true` stands for. */
export const DEFAULT_MARKER_LABEL = 'agentwarden';

const ALLOWED_TYPES = `${AGENT_TYPES.join(', ')} (legacy: ${Object.keys(AGENT_TYPE_ALIASES).join(', ')})`;

function describe(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

function parseTypes(value: unknown, issues: RobotsIssue[], agentsNamed: boolean): AgentType[] {
  if (value === undefined || value === null) {
    issues.push({ path: '/agent_types', code: 'missing', message: `agent_types is required: a non-empty array of ${ALLOWED_TYPES}` });
    return [];
  }
  if (!Array.isArray(value)) {
    issues.push({ path: '/agent_types', code: 'invalid-type', message: `agent_types must be an array of strings, got ${describe(value)}` });
    return [];
  }
  if (value.length === 0) {
    if (!agentsNamed) issues.push({ path: '/agent_types', code: 'empty', message: `agent_types must name at least one of ${ALLOWED_TYPES} (or name agents in disallow_agents or allow_agents)` });
    return [];
  }
  if (value.length > MAX_LIST_ITEMS) {
    issues.push({ path: '/agent_types', code: 'too-many', message: `agent_types may hold at most ${MAX_LIST_ITEMS} entries, got ${value.length}` });
    return [];
  }
  const chosen = new Set<AgentType>();
  value.forEach((item: unknown, i) => {
    const path = `/agent_types/${i}`;
    if (typeof item !== 'string') {
      issues.push({ path, code: 'invalid-type', message: `expected a type name (string), got ${describe(item)}` });
      return;
    }
    const type = resolveAgentType(item);
    if (type === undefined) issues.push({ path, code: 'unknown-agent-type', message: `${preview(item)} is not an agent type; allowed: ${ALLOWED_TYPES}` });
    else chosen.add(type);
  });
  return AGENT_TYPES.filter((type) => chosen.has(type));
}

/** A path list at `pointer` (`/disallow`, `/allow_agents/2/allow`), encoded and deduplicated. */
function parsePaths(pointer: string, value: unknown, fallback: readonly string[], issues: RobotsIssue[]): string[] {
  if (value === undefined || value === null) return [...fallback];
  const name = pointer.slice(pointer.lastIndexOf('/') + 1);
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) {
    issues.push({ path: pointer, code: 'invalid-type', message: `${name} must be a path string or an array of them, got ${describe(value)}` });
    return [];
  }
  if (list.length === 0) {
    issues.push({ path: pointer, code: 'empty', message: `${name} must hold at least one path (omit it for the default)` });
    return [];
  }
  if (list.length > MAX_LIST_ITEMS) {
    issues.push({ path: pointer, code: 'too-many', message: `${name} may hold at most ${MAX_LIST_ITEMS} paths, got ${list.length}` });
    return [];
  }
  const paths = new Set<string>();
  list.forEach((item: unknown, i) => {
    const encoded = encodeRobotsPath(item);
    const path = typeof value === 'string' ? pointer : `${pointer}/${i}`;
    if (encoded.ok) paths.add(encoded.value);
    else issues.push({ path, code: encoded.code, message: `${encoded.message}${typeof item === 'string' ? `: ${preview(item)}` : ''}` });
  });
  return [...paths];
}

// Each catalog's lookup from a lower-cased id or robots token to its agent, built once.
const agentIndexes = new WeakMap<Catalog, ReadonlyMap<string, string>>();

function agentIndex(catalog: Catalog): ReadonlyMap<string, string> {
  let index = agentIndexes.get(catalog);
  if (index === undefined) {
    const built = new Map<string, string>();
    // Ids first: a token that reads as another agent's id never shadows that id.
    for (const agent of catalog.agents) for (const token of agent.robots_tokens) built.set(token.toLowerCase(), agent.id);
    for (const agent of catalog.agents) built.set(agent.id.toLowerCase(), agent.id);
    agentIndexes.set(catalog, (index = built));
  }
  return index;
}

/**
 * Resolves an agent reference as `disallow_agents` and `allow_agents` take it: a catalog id or one
 * of the agent's robots tokens, case-insensitively (RFC 9309 §2.2.1 matches tokens so).
 * @example
 * resolveRobotsAgent(catalog, 'GPTBot'); // 'gptbot'
 */
export function resolveRobotsAgent(catalog: Catalog, reference: string): string | undefined {
  return agentIndex(catalog).get(reference.trim().toLowerCase());
}

function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  return a === b || (a !== null && b !== null && a.length === b.length && a.every((item, i) => item === b[i]));
}

function parseAgentRules(name: 'disallow_agents' | 'allow_agents', value: unknown, catalog: Catalog | undefined, seen: Map<string, string>, issues: RobotsIssue[]): ValidatedAgentRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    issues.push({ path: `/${name}`, code: 'invalid-type', message: `${name} must be an array of agent ids, robots tokens or { agent, ${name === 'allow_agents' ? 'allow' : 'disallow, allow'} } rules, got ${describe(value)}` });
    return [];
  }
  if (value.length > MAX_LIST_ITEMS) {
    issues.push({ path: `/${name}`, code: 'too-many', message: `${name} may hold at most ${MAX_LIST_ITEMS} entries, got ${value.length}` });
    return [];
  }
  const rules = new Map<string, ValidatedAgentRule>();
  value.forEach((entry: unknown, i) => {
    const at = `/${name}/${i}`;
    const isRule = typeof entry === 'object' && entry !== null && !Array.isArray(entry);
    const reference = isRule ? (entry as Record<string, unknown>)['agent'] : entry;
    const referenceAt = isRule ? `${at}/agent` : at;
    if (typeof reference !== 'string' || reference.trim() === '') {
      issues.push({ path: referenceAt, code: 'invalid-type', message: `expected an agent id or robots token (a non-blank string)${isRule ? '' : ' or { agent, ... }'}, got ${typeof reference === 'string' ? 'a blank string' : describe(reference)}` });
      return;
    }
    const rule = isRule ? (entry as Record<string, unknown>) : {};
    if (name === 'allow_agents' && rule['disallow'] !== undefined && rule['disallow'] !== null) {
      issues.push({ path: `${at}/disallow`, code: 'unsupported-field', message: 'an allow_agents rule gives allowed paths only; put disallowed paths in a disallow_agents rule' });
    }
    const disallow = name === 'allow_agents' || rule['disallow'] === undefined || rule['disallow'] === null ? null : parsePaths(`${at}/disallow`, rule['disallow'], [], issues);
    const allow = rule['allow'] === undefined || rule['allow'] === null ? null : parsePaths(`${at}/allow`, rule['allow'], [], issues);
    let agent = reference.trim();
    if (catalog !== undefined) {
      const id = resolveRobotsAgent(catalog, agent);
      if (id === undefined) {
        issues.push({ path: referenceAt, code: 'unknown-agent', message: `${preview(reference)} is neither an agent id nor a robots token of the catalog` });
        return;
      }
      agent = id;
    }
    const validated = { agent, disallow, allow };
    const earlier = rules.get(agent);
    if (earlier !== undefined && sameList(earlier.disallow, disallow) && sameList(earlier.allow, allow)) return;
    const other = seen.get(agent);
    if (other !== undefined) {
      issues.push({ path: referenceAt, code: 'conflicting-agent', message: `${preview(reference)} (${agent}) already has a rule at ${other}; name each agent once` });
      return;
    }
    seen.set(agent, at);
    rules.set(agent, validated);
  });
  return [...rules.values()].sort((a, b) => (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0));
}

function markerText(value: unknown, path: string, issues: RobotsIssue[]): string {
  if (typeof value !== 'string') {
    issues.push({ path, code: 'invalid-type', message: `marker text must be a string, got ${describe(value)}` });
  } else if (value.trim() === '') {
    issues.push({ path, code: 'empty', message: 'marker text must not be blank' });
  } else if (value.length > MAX_MARKER_LENGTH) {
    issues.push({ path, code: 'too-long', message: `marker text may be at most ${MAX_MARKER_LENGTH} characters, got ${value.length}` });
  } else if (CONTROL.test(value)) {
    issues.push({ path, code: 'control-character', message: `marker text must not contain control characters, CR, LF or line separators: ${preview(value)}` });
  } else if (hasLoneSurrogate(value)) {
    issues.push({ path, code: 'invalid-unicode', message: 'marker text must be well-formed Unicode (it holds an unpaired surrogate)' });
  } else {
    return value.trim();
  }
  return '';
}

function parseMarkers(value: unknown, issues: RobotsIssue[]): RobotsMarkers | null {
  if (value === undefined || value === null || value === false) return null;
  if (value === true) return { begin: `BEGIN ${DEFAULT_MARKER_LABEL}`, end: `END ${DEFAULT_MARKER_LABEL}` };
  if (typeof value === 'string') {
    const label = markerText(value, '/markers', issues);
    return { begin: `BEGIN ${label}`, end: `END ${label}` };
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const { begin, end } = value as { begin?: unknown; end?: unknown };
    return { begin: markerText(begin, '/markers/begin', issues), end: markerText(end, '/markers/end', issues) };
  }
  issues.push({ path: '/markers', code: 'invalid-type', message: `markers must be a boolean, a label string or { begin, end }, got ${describe(value)}` });
  return null;
}

/**
 * Validates robots.txt options without throwing: every issue is reported with a JSON pointer.
 * Nothing of a rejected value reaches the text; messages quote it JSON-escaped and shortened.
 * With a catalog, `disallow_agents`/`allow_agents` references are resolved to agent ids (an unknown
 * one is an `unknown-agent` issue); without one they are checked for form only.
 * @example
 * parseRobotsOptions({ agent_types: ['AI Data Scraper', 'Bogus'] });
 * // { ok: false, issues: [{ path: '/agent_types/1', code: 'unknown-agent-type', message: '"Bogus" is not an agent type; allowed: ...' }] }
 * parseRobotsOptions({ agent_types: ['AI Data Scraper'], allow_agents: ['CCBot'] }, catalog);
 * // { ok: true, options: { agentTypes: ['AI Data Scraper'], allowAgents: [{ agent: 'ccbot', disallow: null, allow: null }], ... } }
 */
export function parseRobotsOptions(input: unknown, catalog?: Catalog): ParsedRobotsOptions {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ path: '', code: 'not-an-object', message: `options must be an object with agent_types, got ${describe(input)}` }] };
  }
  const raw = input as Record<string, unknown>;
  const issues: RobotsIssue[] = [];
  const seen = new Map<string, string>();
  const disallowAgents = parseAgentRules('disallow_agents', raw.disallow_agents, catalog, seen, issues);
  const allowAgents = parseAgentRules('allow_agents', raw.allow_agents, catalog, seen, issues);
  const agentsNamed = (Array.isArray(raw.disallow_agents) && raw.disallow_agents.length > 0) || (Array.isArray(raw.allow_agents) && raw.allow_agents.length > 0);
  const agentTypes = parseTypes(raw.agent_types, issues, agentsNamed);
  const disallow = parsePaths('/disallow', raw.disallow, ['/'], issues);
  const allow = parsePaths('/allow', raw.allow, [], issues);
  let comments = false;
  if (raw.comments !== undefined && raw.comments !== null) {
    if (typeof raw.comments === 'boolean') comments = raw.comments;
    else issues.push({ path: '/comments', code: 'invalid-type', message: `comments must be a boolean, got ${describe(raw.comments)}` });
  }
  const markers = parseMarkers(raw.markers, issues);
  if (issues.length > 0) return { ok: false, issues };
  const agentKey = (rules: readonly ValidatedAgentRule[]) => rules.map((rule) => [rule.agent, rule.disallow, rule.allow]);
  const key = JSON.stringify([agentTypes, disallow, allow, comments, markers && [markers.begin, markers.end], agentKey(disallowAgents), agentKey(allowAgents)]);
  return { ok: true, options: { agentTypes, disallowAgents, allowAgents, disallow, allow, comments, markers, key } };
}

/**
 * Validates robots.txt options, throwing on the first invalid call (agents resolved as `parseRobotsOptions` does).
 * @throws {RobotsOptionsError} listing every issue (JSON pointer, code, message).
 */
export function validateRobotsOptions(input: unknown, catalog?: Catalog): ValidatedRobotsOptions {
  const parsed = parseRobotsOptions(input, catalog);
  if (!parsed.ok) throw new RobotsOptionsError(parsed.issues);
  return parsed.options;
}
