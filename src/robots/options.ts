// Validates robots.txt options into a canonical form (unique types in display order, encoded paths)
// whose key identifies the output, so equal requests share one memoized rendering.
import { resolveAgentType } from '../catalog/catalog.js';
import { AGENT_TYPES, AGENT_TYPE_ALIASES, type AgentType } from '../catalog/types.js';
import { CONTROL, LONE_SURROGATE, encodeRobotsPath } from './encode-path.js';
import { preview, RobotsOptionsError, type RobotsIssue } from './errors.js';

/** Marker comment text around the generated block, for splicing it into an existing robots.txt. */
export interface RobotsMarkers {
  readonly begin: string;
  readonly end: string;
}

/**
 * Options of `robotsTxt` (the `POST /robots-txts` body plus extensions). Unknown keys are ignored;
 * `null` counts as absent for the optional ones.
 */
export interface RobotsTxtOptions {
  /** Agent types to disallow (the 17 types; "Headless Agent"/"Headless Browser" mean "Automated Agent"). */
  readonly agent_types: readonly string[];
  /** Path pattern(s) each chosen agent is disallowed; default "/". */
  readonly disallow?: string | readonly string[] | null;
  /** Path pattern(s) each chosen agent stays allowed (longest match wins, allow wins ties). */
  readonly allow?: string | readonly string[] | null;
  /** Adds `# <type>` and `# <agent url>` above each group. */
  readonly comments?: boolean | null;
  /** `true`: `# BEGIN agentwarden` … `# END agentwarden`; a string: `# BEGIN <it>` … `# END <it>`; or both lines' text. */
  readonly markers?: boolean | string | RobotsMarkers | null;
}

/** Options after validation: what the renderer needs, canonical, plus the cache key derived from it. */
export interface ValidatedRobotsOptions {
  /** Unique, in display order (AGENT_TYPES). */
  readonly agentTypes: readonly AgentType[];
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

/** At most this many entries in `agent_types`, `disallow` or `allow` (duplicates included). */
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

function parseTypes(value: unknown, issues: RobotsIssue[]): AgentType[] {
  if (value === undefined || value === null) {
    issues.push({ path: '/agent_types', code: 'missing', message: `agent_types is required: a non-empty array of ${ALLOWED_TYPES}` });
    return [];
  }
  if (!Array.isArray(value)) {
    issues.push({ path: '/agent_types', code: 'invalid-type', message: `agent_types must be an array of strings, got ${describe(value)}` });
    return [];
  }
  if (value.length === 0) {
    issues.push({ path: '/agent_types', code: 'empty', message: `agent_types must name at least one of ${ALLOWED_TYPES}` });
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

function parsePaths(name: 'disallow' | 'allow', value: unknown, fallback: readonly string[], issues: RobotsIssue[]): string[] {
  if (value === undefined || value === null) return [...fallback];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) {
    issues.push({ path: `/${name}`, code: 'invalid-type', message: `${name} must be a path string or an array of them, got ${describe(value)}` });
    return [];
  }
  if (list.length === 0) {
    issues.push({ path: `/${name}`, code: 'empty', message: `${name} must hold at least one path (omit it for the default)` });
    return [];
  }
  if (list.length > MAX_LIST_ITEMS) {
    issues.push({ path: `/${name}`, code: 'too-many', message: `${name} may hold at most ${MAX_LIST_ITEMS} paths, got ${list.length}` });
    return [];
  }
  const paths = new Set<string>();
  list.forEach((item: unknown, i) => {
    const encoded = encodeRobotsPath(item);
    const path = typeof value === 'string' ? `/${name}` : `/${name}/${i}`;
    if (encoded.ok) paths.add(encoded.value);
    else issues.push({ path, code: encoded.code, message: `${encoded.message}${typeof item === 'string' ? `: ${preview(item)}` : ''}` });
  });
  return [...paths];
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
  } else if (LONE_SURROGATE.test(value)) {
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
 * @example
 * parseRobotsOptions({ agent_types: ['AI Data Scraper', 'Bogus'] });
 * // { ok: false, issues: [{ path: '/agent_types/1', code: 'unknown-agent-type', message: '"Bogus" is not an agent type; allowed: ...' }] }
 */
export function parseRobotsOptions(input: unknown): ParsedRobotsOptions {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, issues: [{ path: '', code: 'not-an-object', message: `options must be an object with agent_types, got ${describe(input)}` }] };
  }
  const raw = input as Record<string, unknown>;
  const issues: RobotsIssue[] = [];
  const agentTypes = parseTypes(raw.agent_types, issues);
  const disallow = parsePaths('disallow', raw.disallow, ['/'], issues);
  const allow = parsePaths('allow', raw.allow, [], issues);
  let comments = false;
  if (raw.comments !== undefined && raw.comments !== null) {
    if (typeof raw.comments === 'boolean') comments = raw.comments;
    else issues.push({ path: '/comments', code: 'invalid-type', message: `comments must be a boolean, got ${describe(raw.comments)}` });
  }
  const markers = parseMarkers(raw.markers, issues);
  if (issues.length > 0) return { ok: false, issues };
  const key = JSON.stringify([agentTypes, disallow, allow, comments, markers && [markers.begin, markers.end]]);
  return { ok: true, options: { agentTypes, disallow, allow, comments, markers, key } };
}

/**
 * Validates robots.txt options, throwing on the first invalid call.
 * @throws {RobotsOptionsError} listing every issue (JSON pointer, code, message).
 */
export function validateRobotsOptions(input: unknown): ValidatedRobotsOptions {
  const parsed = parseRobotsOptions(input);
  if (!parsed.ok) throw new RobotsOptionsError(parsed.issues);
  return parsed.options;
}
